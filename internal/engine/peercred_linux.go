package engine

import (
	"fmt"
	"log/slog"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// sameUserListener accepts only connections from processes of the engine's
// own user (SO_PEERCRED), on top of the socket's 0600 mode: a socket in a
// directory another user can reach is still not an open door.
type sameUserListener struct {
	net.Listener
	uid int
	log *slog.Logger
}

func restrictToOwnUser(l net.Listener, log *slog.Logger) net.Listener {
	return &sameUserListener{Listener: l, uid: os.Getuid(), log: log}
}

func (l *sameUserListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && uid == l.uid {
			return c, nil
		}
		l.log.Warn("engine refused a connection from another user", "peer_uid", uid, "err", err)
		c.Close()
	}
}

func peerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1, fmt.Errorf("not a unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return -1, err
	}
	if cerr != nil {
		return -1, cerr
	}
	return int(cred.Uid), nil
}
