package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/engine"
	"github.com/ai-memory/ai-memory/internal/engine/authz"
	"github.com/ai-memory/ai-memory/internal/engine/storage/rules"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// maxRecordsNamed is how many rule-breaking records doctor names.
const maxRecordsNamed = 10

// recordsCheck reads every record of the running engine (one Export
// stream) and names those that break the record rules of today: a rule
// such as the identity rule of namespaces (sdk/record/text.go) applies to
// writes, so records written before it existed stay as they were. Doctor
// names them so an operator can fix them (memory_update moves a memory to
// a valid namespace or retitles it).
func recordsCheck(dataDir string) check {
	creds, err := assertion.HostDial(dataDir, "cli:doctor", "")
	if err != nil {
		return failed("records", err)
	}
	conn, err := wire.DialEngineAt(engine.SocketPath(dataDir), creds)
	if err != nil {
		return failed("records", err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := conn.Export(ctx, &aimemoryv1.ExportRequest{}, grpc.WaitForReady(false))
	if err != nil {
		return failed("records", err)
	}
	var named []string
	read, broken := 0, 0
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return failed("records", fmt.Errorf("reading the records: %w", err))
		}
		read++
		if what, err := recordProblem(r); err != nil {
			if broken++; len(named) < maxRecordsNamed {
				named = append(named, what+": "+err.Error())
			}
		}
	}
	if broken == 0 {
		return check{Name: "records", OK: true, Status: "ok", Detail: fmt.Sprintf("%d records keep the record rules", read)}
	}
	if more := broken - len(named); more > 0 {
		named = append(named, fmt.Sprintf("… %d more", more))
	}
	return failed("records", fmt.Errorf("%d of %d records break the record rules (written before a rule existed; fix them with memory_update): %s",
		broken, read, strings.Join(named, "; ")))
}

func failed(name string, err error) check {
	return check{Name: name, Status: "fail", Detail: err.Error()}
}

// recordProblem is the first rule r breaks, with what r is; nil when none.
// Memories, live or archived, are checked as import checks a stored record
// (rules.ValidImported); a registered agent's type and a standard's
// namespace and owner by their own rules.
func recordProblem(r *aimemoryv1.ExportRecord) (string, error) {
	switch {
	case r.GetMemory() != nil:
		return "memory " + r.GetMemory().GetId(), memoryProblem(r.GetMemory())
	case r.GetArchived() != nil:
		m := r.GetArchived().GetMemory()
		return "archived memory " + m.GetId(), memoryProblem(m)
	case r.GetStandard() != nil:
		st := r.GetStandard()
		what := "standard of " + record.Quote(st.GetNamespace())
		if ns := st.GetNamespace(); ns != "*" {
			if err := record.ValidateNamespace("namespace", ns); err != nil {
				return what, err
			}
		}
		if o := st.GetOwner(); o != "" {
			return what, record.ValidateAgentID("owner", o)
		}
	}
	return "", nil
}

func memoryProblem(m *aimemoryv1.Memory) error {
	if err := rules.ValidImported(m); err != nil {
		return err
	}
	if m.GetNamespace() != authz.GuardAgents.Name {
		return nil
	}
	var reg struct {
		AgentType *string `json:"agent_type"`
	}
	if json.Unmarshal(m.GetMetadataJson(), &reg) == nil && reg.AgentType != nil && *reg.AgentType != "" {
		return record.ValidateAgentType(*reg.AgentType)
	}
	return nil
}
