package mcphost

import (
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// stdioSession is the one client session of a stdio pipe, as mcp-go sees
// it: where its notifications go and what initialize said about the client.
type stdioSession struct {
	notifications chan mcp.JSONRPCNotification
	initialized   atomic.Bool
	clientInfo    atomic.Pointer[mcp.Implementation]
	capabilities  atomic.Pointer[mcp.ClientCapabilities]
	protocol      atomic.Pointer[string]
	logLevel      atomic.Pointer[mcp.LoggingLevel]
}

var (
	_ server.SessionWithClientInfo      = (*stdioSession)(nil)
	_ server.SessionWithLogging         = (*stdioSession)(nil)
	_ server.SessionWithProtocolVersion = (*stdioSession)(nil)
)

func newStdioSession() *stdioSession {
	return &stdioSession{notifications: make(chan mcp.JSONRPCNotification, 100)}
}

// stdioSessionID names the one session of a stdio pipe.
const stdioSessionID = "stdio"

func (s *stdioSession) SessionID() string { return stdioSessionID }
func (s *stdioSession) Initialize()       { s.initialized.Store(true) }
func (s *stdioSession) Initialized() bool { return s.initialized.Load() }

func (s *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notifications }

func (s *stdioSession) GetClientInfo() mcp.Implementation {
	if p := s.clientInfo.Load(); p != nil {
		return *p
	}
	return mcp.Implementation{}
}

func (s *stdioSession) SetClientInfo(c mcp.Implementation) { s.clientInfo.Store(&c) }

func (s *stdioSession) GetClientCapabilities() mcp.ClientCapabilities {
	if p := s.capabilities.Load(); p != nil {
		return *p
	}
	return mcp.ClientCapabilities{}
}

func (s *stdioSession) SetClientCapabilities(c mcp.ClientCapabilities) { s.capabilities.Store(&c) }

func (s *stdioSession) ProtocolVersion() string {
	if p := s.protocol.Load(); p != nil {
		return *p
	}
	return ""
}

func (s *stdioSession) SetProtocolVersion(v string) { s.protocol.Store(&v) }

func (s *stdioSession) SetLogLevel(l mcp.LoggingLevel) { s.logLevel.Store(&l) }

func (s *stdioSession) GetLogLevel() mcp.LoggingLevel {
	if p := s.logLevel.Load(); p != nil {
		return *p
	}
	return mcp.LoggingLevelError
}
