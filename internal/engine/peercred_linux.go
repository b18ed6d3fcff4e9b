package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// sameUserListener accepts only connections from processes of the engine's
// own user (SO_PEERCRED), on top of the socket's 0600 mode: a socket in a
// directory another user can reach is still not an open door. Each
// connection keeps its peer's pid, which the caller check compares with
// the pid an assertion was issued to.
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
		cred, err := peerCred(c)
		if err == nil && int(cred.Uid) == l.uid {
			return &peerConn{Conn: c, pid: int(cred.Pid)}, nil
		}
		uid := -1
		if cred != nil {
			uid = int(cred.Uid)
		}
		l.log.Warn("engine refused a connection from another user", "peer_uid", uid, "err", err)
		c.Close()
	}
}

// peerConn is an accepted connection and the pid of the process that
// connected (as SO_PEERCRED reported it at connect time).
type peerConn struct {
	net.Conn
	pid int
}

// peerCredentials are the engine's transport: no security on the wire (a
// same-user unix socket), but each connection's peer pid in its AuthInfo.
func peerCredentials() grpc.ServerOption {
	return grpc.Creds(pidCreds{})
}

type pidCreds struct{}

func (pidCreds) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("the engine's transport credentials are a server's")
}

func (pidCreds) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	info := peerInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}
	if pc, ok := c.(*peerConn); ok {
		info.pid = pc.pid
	}
	return c, info, nil
}

func (pidCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "insecure"}
}

func (p pidCreds) Clone() credentials.TransportCredentials { return p }

func (pidCreds) OverrideServerName(string) error { return nil }

// peerInfo implements assertion.PeerPID; a pid of 0 (a connection that did
// not come through sameUserListener) matches no assertion.
type peerInfo struct {
	credentials.CommonAuthInfo
	pid int
}

func (peerInfo) AuthType() string { return "insecure" }
func (p peerInfo) PeerPID() int   { return p.pid }

func peerCred(c net.Conn) (*unix.Ucred, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, fmt.Errorf("not a unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, cerr
}
