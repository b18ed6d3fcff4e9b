package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ai-memory/ai-memory/internal/engine/storage/migration"
	"github.com/ai-memory/ai-memory/sdk/wire"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/keyfile"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// The export format is JSON Lines: a header, then one record per line,
// {"kind": <one of migration.Kinds>, "record": <the stored record in
// protojson>}, so every field (ids, created_by, updated_by, times, access
// counts, policies, owners, votes) survives a round trip. A webhook
// secret stays sealed (see transfer.proto's WebhookSubscription). Vectors
// are not carried: `ai-memory reindex` rebuilds them.

const exportFormat = "ai-memory-export"

type exportLine struct {
	Kind    string          `json:"kind"`
	Format  string          `json:"format,omitempty"`
	Version int             `json:"version,omitempty"`
	Record  json.RawMessage `json:"record,omitempty"`
}

var recordJSON = protojson.MarshalOptions{UseProtoNames: true}

type exportCmd struct {
	File string `arg:"" optional:"" help:"Where to write (default: standard output)." type:"path"`
	operatorID
}

func (c *exportCmd) Run(root *rootCmd) error {
	id, conn, err := c.engine(root)
	if err != nil {
		return err
	}
	defer conn.Close()
	var out io.Writer = os.Stdout
	var f *os.File
	if c.File != "" && c.File != "-" {
		if f, err = os.OpenFile(c.File+".tmp", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600); err != nil {
			return err
		}
		defer os.Remove(c.File + ".tmp")
		out = f
	}
	w := bufio.NewWriterSize(out, 1<<20)
	start := time.Now()
	h, err := conn.Health(context.Background(), &aimemoryv1.HealthRequest{})
	if err != nil {
		return err
	}
	bar := progress(int64(h.GetMemoryCount()), "exporting")
	stream, err := conn.Export(context.Background(), &aimemoryv1.ExportRequest{})
	if err != nil {
		return err
	}
	header, _ := json.Marshal(exportLine{Kind: "header", Format: exportFormat, Version: 1})
	w.Write(append(header, '\n'))
	counts := map[string]int{}
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		kind, msg := migration.KindOf(r)
		if msg == nil {
			continue
		}
		if kind == "memory" {
			bar.Add(1)
		}
		raw, err := recordJSON.Marshal(msg)
		if err != nil {
			return err
		}
		line, _ := json.Marshal(exportLine{Kind: kind, Record: raw})
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
		counts[kind]++
	}
	bar.Finish()
	if err := w.Flush(); err != nil {
		return err
	}
	if f != nil {
		if err := f.Sync(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.Rename(c.File+".tmp", c.File); err != nil {
			return err
		}
	}
	what := fmt.Sprintf("%d memories, %d archived, %d versions, %d links, %d archived links, %d entities, %d standards, %d pending, %d subscriptions",
		counts["memory"], counts["archived"], counts["version"], counts["link"], counts["archived_link"], counts["entity"], counts["standard"], counts["pending"], counts["subscription"])
	audit(conn, id, "export", what+" from "+config.DataDir(root.DataDir))
	fmt.Fprintf(os.Stderr, "exported %s in %s\n", what, time.Since(start).Round(time.Millisecond))
	return nil
}

type importCmd struct {
	File string `arg:"" help:"A file ai-memory export wrote (- for standard input)."`
	operatorID
	WebhookKey string `help:"The exporting data dir's webhook.key, to re-seal webhook secrets for this data dir (needed for signed subscriptions from another data dir)." type:"existingfile"`
}

// importBatch is how many records go in one Import request (one transaction).
const importBatch = 1000

// Run imports every record it can and reports each line it cannot, by
// number; it exits 1 when any line was refused or corrupt.
func (c *importCmd) Run(root *rootCmd) error {
	id, err := c.identity()
	if err != nil {
		return err
	}
	var webhookKey []byte
	if c.WebhookKey != "" {
		if webhookKey, err = keyfile.Load(c.WebhookKey, "--webhook-key"); err != nil {
			return &exitError{code: 2, msg: "ai-memory import: " + err.Error()}
		}
	}
	var in io.Reader = os.Stdin
	total := int64(-1)
	if c.File != "-" {
		b, err := os.ReadFile(c.File)
		if err != nil {
			return err
		}
		total = int64(bytes.Count(b, []byte("\n")))
		in = bytes.NewReader(b)
	}
	// The data dir may be new: a host creates it, and its engine, on demand.
	dataDir := config.DataDir(root.DataDir)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	conn, err := engineFor(root, id)
	if err != nil {
		return err
	}
	defer conn.Close()
	start := time.Now()
	bar := progress(total, "importing")
	counts := map[string]int{}
	type problem struct {
		line int
		why  string
	}
	var problems []problem
	report := func(line int, why string) {
		counts["bad"]++
		if len(problems) < 100 {
			problems = append(problems, problem{line, why})
		}
	}
	var batch []*aimemoryv1.ExportRecord
	var lines []int
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		resp, err := conn.Import(context.Background(), &aimemoryv1.ImportRequest{Records: batch, SourceWebhookKey: webhookKey})
		if err != nil {
			return fmt.Errorf("import (lines %d-%d): %w", lines[0], lines[len(lines)-1], err)
		}
		for i, r := range resp.GetResults() {
			switch r.GetOutcome() {
			case "created", "unchanged":
				counts[r.GetOutcome()]++
			default:
				report(lines[i], r.GetError())
			}
		}
		bar.Add(len(batch))
		batch, lines = batch[:0], lines[:0]
		return nil
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		r, err := parseLine(raw)
		if err != nil {
			report(n, err.Error())
			bar.Add(1)
			continue
		}
		if r == nil { // the header
			bar.Add(1)
			continue
		}
		batch, lines = append(batch, r), append(lines, n)
		if len(batch) == importBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", n+1, err)
	}
	if err := flush(); err != nil {
		return err
	}
	bar.Finish()
	summary := fmt.Sprintf("%d created, %d unchanged, %d not imported", counts["created"], counts["unchanged"], counts["bad"])
	audit(conn, id, "import", summary+" from "+c.File)
	slices.SortFunc(problems, func(a, b problem) int { return a.line - b.line })
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "line %d: %s\n", p.line, p.why)
	}
	if counts["bad"] > len(problems) {
		fmt.Fprintf(os.Stderr, "... and %d more\n", counts["bad"]-len(problems))
	}
	fmt.Fprintf(os.Stderr, "imported %s: %s in %s\n", c.File, summary, time.Since(start).Round(time.Millisecond))
	if counts["bad"] > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("ai-memory import: %d lines not imported", counts["bad"])}
	}
	return nil
}

// parseLine reads one export line; nil for the header.
func parseLine(raw []byte) (*aimemoryv1.ExportRecord, error) {
	var l exportLine
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if l.Kind == "header" {
		if l.Format != exportFormat || l.Version != 1 {
			return nil, fmt.Errorf("header: format %q version %d, want %s version 1", clip(l.Format), l.Version, exportFormat)
		}
		return nil, nil
	}
	r, msg := newRecord(l.Kind)
	if r == nil {
		return nil, fmt.Errorf("kind: %q (%d bytes) is not header, %s", clip(l.Kind), len(l.Kind), strings.Join(migration.Kinds, ", "))
	}
	if err := (protojson.UnmarshalOptions{}).Unmarshal(l.Record, msg); err != nil {
		return nil, fmt.Errorf("%s record: %v", l.Kind, err)
	}
	return r, nil
}

// newRecord is an empty record of kind and the message to fill; nil for
// an unknown kind.
func newRecord(kind string) (*aimemoryv1.ExportRecord, proto.Message) {
	switch kind {
	case "memory":
		m := &aimemoryv1.Memory{}
		return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Memory{Memory: m}}, m
	case "archived":
		m := &aimemoryv1.ArchivedMemory{}
		return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Archived{Archived: m}}, m
	case "version":
		m := &aimemoryv1.SupersededVersion{}
		return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Version{Version: m}}, m
	case "link":
		m := &aimemoryv1.Link{}
		return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Link{Link: m}}, m
	case "archived_link":
		m := &aimemoryv1.Link{}
		return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_ArchivedLink{ArchivedLink: m}}, m
	case "entity":
		m := &aimemoryv1.EntityAliases{}
		return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Entity{Entity: m}}, m
	case "standard":
		m := &aimemoryv1.Standard{}
		return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Standard{Standard: m}}, m
	case "pending":
		m := &aimemoryv1.PendingAction{}
		return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Pending{Pending: m}}, m
	case "subscription":
		m := &aimemoryv1.WebhookSubscription{}
		return &aimemoryv1.ExportRecord{Record: &aimemoryv1.ExportRecord_Subscription{Subscription: m}}, m
	}
	return nil, nil
}

// progress is a bar on a terminal (stderr), nothing when piped.
func progress(total int64, what string) *progressbar.ProgressBar {
	if !isatty.IsTerminal(os.Stderr.Fd()) {
		return progressbar.DefaultSilent(total, what)
	}
	return progressbar.Default(total, what)
}

// audit records an operator action; a failure is reported, not fatal (the
// records are written).
func audit(conn *wire.EngineConn, agent, event, reason string) {
	_, err := conn.AppendAudit(context.Background(), &aimemoryv1.AppendAuditRequest{Record: &aimemoryv1.AuditRecord{
		AgentId: agent, Event: event, Granted: true, Reason: reason,
	}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ai-memory %s: could not audit: %v\n", event, err)
	}
}
