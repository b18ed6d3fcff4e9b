package sandbox

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported: this OS has a launcher (it may still lack Landlock: ABI).
const Supported = true

// maxABI is the newest Landlock ABI this code knows the rights of.
const maxABI = 7

// ABI is the Landlock ABI the kernel offers (0: none, or disabled).
func ABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// Status says whether plugins run confined here, for doctor.
func Status() (active bool, detail string) {
	abi := ABI()
	if abi == 0 {
		return false, "this kernel offers no Landlock (Linux 5.13+ with landlock in lsm=): plugins run unconfined, see docs/plugins.md"
	}
	return true, fmt.Sprintf("Landlock ABI %d: plugins read no data dir, config or key file, and run no other program", abi)
}

// fsRights are the filesystem rights of each ABI, cumulative.
func fsRights(abi int) uint64 {
	r := uint64(unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return r
}

// fileRights are those that apply to a file (the rest are a directory's).
const fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
	unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

const (
	readRights = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	execRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE
	// writeRights: everything in its own directory but running programs
	// and making device nodes.
	writeRights = ^uint64(unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK)
)

// Exec is the launcher: it checks p.Binary against p.SHA256 on the
// descriptor it executes, confines this thread to p (where Landlock
// exists; no_new_privs always), points stdin at /dev/null (go-plugin
// hands a plugin the host's stdin, which on stdio is the MCP client's),
// and execve()s the plugin with this process's environment. It returns
// only on failure.
func Exec(p Policy) error {
	runtime.LockOSThread() // the ruleset binds this thread, which must be the one to exec
	bin, err := os.Open(p.Binary)
	if err != nil {
		return err
	}
	interp, err := verify(bin, p.SHA256)
	if err != nil {
		return err
	}
	if null, err := os.Open(os.DevNull); err == nil {
		unix.Dup2(int(null.Fd()), 0)
		null.Close()
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if abi := min(ABI(), maxABI); abi > 0 {
		exec := []string{p.Binary}
		if interp != "" {
			exec = append(exec, interp) // the dynamic loader the kernel runs it with
		}
		if err := restrict(abi, p, exec); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	argv, err := cstrings([]string{p.Binary})
	if err != nil {
		return err
	}
	envv, err := cstrings(os.Environ())
	if err != nil {
		return err
	}
	empty := [1]byte{}
	_, _, errno := unix.Syscall6(unix.SYS_EXECVEAT, bin.Fd(), uintptr(unsafe.Pointer(&empty[0])),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])), unix.AT_EMPTY_PATH, 0)
	return fmt.Errorf("execute %s: %w", p.Binary, errno)
}

// verify hashes the open binary and returns its ELF interpreter, if any.
func verify(bin *os.File, want string) (interp string, err error) {
	h := sha256.New()
	if _, err := io.Copy(h, bin); err != nil {
		return "", err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return "", fmt.Errorf("%s has SHA-256 %s but %s was pinned", bin.Name(), got, want)
	}
	head := make([]byte, 2)
	if _, err := bin.ReadAt(head, 0); err == nil && string(head) == "#!" {
		return "", fmt.Errorf("%s is a script: a confined plugin must be an executable (its interpreter could run any other program)", bin.Name())
	}
	f, err := elf.NewFile(bin)
	if err != nil {
		return "", fmt.Errorf("%s is not an executable this launcher knows: %v", bin.Name(), err)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			raw, err := io.ReadAll(prog.Open())
			if err != nil {
				return "", err
			}
			return string(bytes.TrimRight(raw, "\x00")), nil
		}
	}
	return "", nil
}

// restrict applies p to the calling thread.
func restrict(abi int, p Policy, exec []string) error {
	handled := fsRights(abi)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	if abi >= 6 {
		// No signals to, and no abstract unix sockets of, processes outside.
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("create ruleset: %w", errno)
	}
	ruleset := int(fd)
	defer unix.Close(ruleset)
	add := func(paths []string, rights uint64, required bool) error {
		for _, path := range paths {
			if err := addRule(ruleset, path, rights&handled); err != nil {
				if !required && errors.Is(err, os.ErrNotExist) {
					continue
				}
				return err
			}
		}
		return nil
	}
	if err := errors.Join(add(p.Read, readRights, false), add(p.Write, writeRights, false), add(exec, execRights, true)); err != nil {
		return err
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0); errno != 0 {
		return fmt.Errorf("restrict: %w", errno)
	}
	return nil
}

func addRule(ruleset int, path string, rights uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= fileRights
	}
	rule := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&rule)), 0, 0, 0); errno != 0 {
		return &os.PathError{Op: "landlock rule", Path: path, Err: errno}
	}
	return nil
}

// cstrings is a NULL-terminated array of C strings for execve.
func cstrings(ss []string) ([]*byte, error) {
	out := make([]*byte, 0, len(ss)+1)
	for _, s := range ss {
		p, err := unix.BytePtrFromString(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return append(out, nil), nil
}
