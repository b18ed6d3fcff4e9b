package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ai-memory/ai-memory/sdk/procstat"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// BenchmarkHop measures what one hop between two processes costs on this
// machine, over a unix socket, with a get-sized call (a 60-byte request, a
// 600-byte answer, as CallRequest/CallResponse):
//   - unary: one gRPC unary call per round trip (what every hop does today);
//   - stream: one request and one answer on a long-lived gRPC bidi stream;
//   - frame: a length-prefixed protobuf frame each way on the bare socket,
//     the floor of any protocol.
//
// The server is this test binary run again as a child (TestHopServer), so
// the figures include both processes' scheduling: each reports the
// round trip, and the CPU time and thread sleeps of client and server per
// call (from /proc, as BenchmarkCallOverMCP).
func BenchmarkHop(b *testing.B) {
	for _, kind := range []string{"unary", "stream", "frame"} {
		b.Run(kind, func(b *testing.B) {
			sock := filepath.Join(b.TempDir(), "hop.sock")
			cmd := exec.Command(os.Args[0], "-test.run=^TestHopServer$")
			cmd.Env = append(os.Environ(), "HOP_SERVER="+kind+":"+sock)
			cmd.Stderr = os.Stderr
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			if line, _ := bufio.NewReader(out).ReadString('\n'); !strings.HasPrefix(line, "ready") {
				b.Fatalf("server: %q", line)
			}
			req := &aimemoryv1.CallRequest{Tool: "memory_get", ArgumentsJson: []byte(`{"id":"0195f1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b"}`),
				Context: &aimemoryv1.CallContext{Assertion: bytes.Repeat([]byte("a"), 40)}}
			roundTrip := hopClient(b, kind, sock)
			for range 200 {
				roundTrip(req)
			}
			me, srv := os.Getpid(), cmd.Process.Pid
			c0, s0 := procstat.CPU(me), procstat.CPU(srv)
			w0, v0 := procstat.Sleeps(me), procstat.Sleeps(srv)
			n := 0
			for b.Loop() {
				roundTrip(req)
				n++
			}
			fn := float64(n)
			b.ReportMetric(float64((procstat.CPU(me)-c0).Microseconds())/fn, "client-cpu-us/call")
			b.ReportMetric(float64((procstat.CPU(srv)-s0).Microseconds())/fn, "server-cpu-us/call")
			b.ReportMetric(float64(procstat.Sleeps(me)-w0)/fn, "client-sleeps/call")
			b.ReportMetric(float64(procstat.Sleeps(srv)-v0)/fn, "server-sleeps/call")
		})
	}
}

var hopAnswer = bytes.Repeat([]byte("x"), 600)

var hopDesc = grpc.ServiceDesc{
	ServiceName: "hop.Hop",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Call", Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		req := new(aimemoryv1.CallRequest)
		if err := dec(req); err != nil {
			return nil, err
		}
		return &aimemoryv1.CallResponse{Text: hopAnswer}, nil
	}}},
	Streams: []grpc.StreamDesc{{StreamName: "Calls", ServerStreams: true, ClientStreams: true, Handler: func(_ any, st grpc.ServerStream) error {
		for {
			req := new(aimemoryv1.CallRequest)
			if err := st.RecvMsg(req); err != nil {
				return nil
			}
			if err := st.SendMsg(&aimemoryv1.CallResponse{Text: hopAnswer}); err != nil {
				return err
			}
		}
	}}},
}

// TestHopServer is BenchmarkHop's server, run only as its child.
func TestHopServer(t *testing.T) {
	spec := os.Getenv("HOP_SERVER")
	if spec == "" {
		t.Skip("BenchmarkHop's child")
	}
	kind, sock, _ := strings.Cut(spec, ":")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	if kind != "frame" {
		s := grpc.NewServer(GRPCServerOptions()...)
		s.RegisterService(&hopDesc, nil)
		s.Serve(l)
		return
	}
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	var buf []byte
	for {
		msg, err := readFrame(r, &buf)
		if err != nil {
			return
		}
		req := new(aimemoryv1.CallRequest)
		if proto.Unmarshal(msg, req) != nil {
			return
		}
		out, _ := proto.Marshal(&aimemoryv1.CallResponse{Text: hopAnswer})
		writeFrame(w, out)
		w.Flush()
	}
}

func hopClient(b *testing.B, kind, sock string) func(*aimemoryv1.CallRequest) {
	if kind == "frame" {
		c, err := net.Dial("unix", sock)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		r, w := bufio.NewReader(c), bufio.NewWriter(c)
		var buf []byte
		return func(req *aimemoryv1.CallRequest) {
			out, _ := proto.Marshal(req)
			writeFrame(w, out)
			w.Flush()
			msg, err := readFrame(r, &buf)
			if err != nil {
				b.Fatal(err)
			}
			resp := new(aimemoryv1.CallResponse)
			if err := proto.Unmarshal(msg, resp); err != nil || len(resp.Text) != 600 {
				b.Fatal("bad answer", err)
			}
		}
	}
	cc, err := grpc.NewClient("unix://"+sock, append(GRPCDialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cc.Close() })
	if kind == "unary" {
		return func(req *aimemoryv1.CallRequest) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // as the host's call deadline
			defer cancel()
			resp := new(aimemoryv1.CallResponse)
			if err := cc.Invoke(ctx, "/hop.Hop/Call", req, resp); err != nil || len(resp.Text) != 600 {
				b.Fatal("bad answer", err)
			}
		}
	}
	st, err := cc.NewStream(context.Background(), &hopDesc.Streams[0], "/hop.Hop/Calls")
	if err != nil {
		b.Fatal(err)
	}
	return func(req *aimemoryv1.CallRequest) {
		if err := st.SendMsg(req); err != nil {
			b.Fatal(err)
		}
		resp := new(aimemoryv1.CallResponse)
		if err := st.RecvMsg(resp); err != nil || len(resp.Text) != 600 {
			b.Fatal("bad answer", err)
		}
	}
}

func writeFrame(w io.Writer, msg []byte) {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(msg)))
	w.Write(n[:])
	w.Write(msg)
}

func readFrame(r io.Reader, buf *[]byte) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := int(binary.LittleEndian.Uint32(n[:]))
	if cap(*buf) < size {
		*buf = make([]byte, size)
	}
	msg := (*buf)[:size]
	_, err := io.ReadFull(r, msg)
	return msg, err
}
