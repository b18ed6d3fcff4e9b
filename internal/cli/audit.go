package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/ai-memory/ai-memory/internal/assertion"
	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/engine"
	auditchain "github.com/ai-memory/ai-memory/internal/engine/audit"
	"github.com/ai-memory/ai-memory/internal/engine/launcher"
	"github.com/ai-memory/ai-memory/internal/engine/settings"
	"github.com/ai-memory/ai-memory/sdk/record"
	"github.com/ai-memory/ai-memory/sdk/wire"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

type auditCmd struct {
	List   auditListCmd   `cmd:"" help:"Show audit records, newest first."`
	Verify auditVerifyCmd `cmd:"" help:"Recompute the keyed hash chain and hold it to the head this data dir's engine pinned; report what was checked."`
}

type auditListCmd struct {
	AgentID string `help:"Only this agent id (exact)."`
	Limit   uint32 `help:"At most this many records (1-10000)." default:"50"`
	JSON    bool   `help:"Print JSON."`
}

type auditVerifyCmd struct {
	JSON bool `help:"Print JSON."`
}

// engineClient connects to the data dir's engine, starting it if needed.
// A data dir without a memory database is an error: reading its audit log
// would create an empty one and report a fresh chain as if it were intact.
func engineClient(root *rootCmd, principal string) (*wire.EngineConn, error) {
	dataDir := config.DataDir(root.DataDir)
	if _, err := os.Stat(dataDir); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no data dir at %s (check --data-dir or AI_MEMORY_DATA_DIR)", dataDir)
	} else if err != nil {
		return nil, err
	}
	if err := hasStore(dataDir); err != nil {
		return nil, err
	}
	return engineFor(root, principal)
}

// hasStore: the data dir has a store to read, its bbolt file or the
// PostgreSQL database its engine.toml names.
func hasStore(dataDir string) error {
	st, _, err := settings.Load(dataDir)
	if err != nil {
		return err
	}
	if st.Storage.Postgres() {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dataDir, engine.DBFile)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no %s in data dir %s: nothing was ever stored there (check --data-dir or AI_MEMORY_DATA_DIR)", engine.DBFile, dataDir)
	} else if err != nil {
		return err
	}
	return nil
}

// engineFor connects to the data dir's engine as principal, starting it
// (and so creating its database) if needed.
func engineFor(root *rootCmd, principal string) (*wire.EngineConn, error) {
	dataDir := config.DataDir(root.DataDir)
	if err := root.reconcile(dataDir, slog.New(slog.NewTextHandler(os.Stderr, nil))); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	creds, err := assertion.HostDial(dataDir, principal, "")
	if err != nil {
		return nil, err
	}
	socket, err := launcher.EnsureRunning(ctx, selfPath(), dataDir, 30*time.Second, creds)
	if err != nil {
		return nil, err
	}
	return wire.DialEngineAt(socket, creds)
}

func (c *auditListCmd) Run(root *rootCmd) error {
	if c.Limit < 1 || c.Limit > 10000 {
		return &exitError{code: 2, msg: "ai-memory audit list: --limit must be from 1 to 10000"}
	}
	conn, err := engineClient(root, "cli:audit")
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := conn.ListAudit(context.Background(), &aimemoryv1.ListAuditRequest{AgentId: c.AgentID, Limit: c.Limit})
	if err != nil {
		return err
	}
	if c.JSON {
		rows := make([]map[string]any, 0, len(resp.GetRecords()))
		for _, r := range resp.GetRecords() {
			row := map[string]any{"seq": r.GetSeq(), "timestamp": record.FormatTime(r.GetAt()), "agent_id": r.GetAgentId(),
				"event_type": r.GetEvent(), "family": r.GetFamily(), "tool": r.GetTool(), "granted": r.GetGranted(),
				"reason": r.GetReason(), "hash": r.GetHash()}
			if a := r.GetAttestation(); a != "" {
				row["attestation"] = a // how an HTTP principal was identified
			}
			if n := r.GetSuppressed(); n > 0 {
				row["suppressed"] = n // refusals the rate limit left unrecorded before this one
			}
			rows = append(rows, row)
		}
		out, _ := json.MarshalIndent(rows, "", "  ")
		fmt.Println(string(out))
		return nil
	}
	if len(resp.GetRecords()) == 0 {
		fmt.Println("no audit records")
		return nil
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SEQ\tTIME\tVERDICT\tFAMILY/TOOL\tAGENT\tEVENT\tREASON")
	for _, r := range resp.GetRecords() {
		verdict := "DENY"
		if r.GetGranted() {
			verdict = "ALLOW"
		}
		target := r.GetFamily()
		if r.GetTool() != "" {
			target += "/" + r.GetTool()
		}
		reason := r.GetReason()
		if a := r.GetAttestation(); a != "" {
			reason += " (" + a + ")"
		}
		if n := r.GetSuppressed(); n > 0 {
			reason += fmt.Sprintf(" [+%d more not recorded: rate limit]", n)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.GetSeq(), record.FormatTime(r.GetAt()), verdict, cmp.Or(target, "-"), cmp.Or(r.GetAgentId(), "-"), r.GetEvent(), reason)
	}
	return w.Flush()
}

func (c *auditVerifyCmd) Run(root *rootCmd) error {
	conn, err := engineClient(root, "cli:audit")
	if err != nil {
		return err
	}
	defer conn.Close()
	v, err := conn.VerifyAudit(context.Background(), &aimemoryv1.VerifyAuditRequest{})
	if err != nil {
		return err
	}
	if c.JSON {
		out, _ := json.MarshalIndent(map[string]any{"ok": v.GetOk(), "count": v.GetCount(), "head_hash": v.GetHeadHash(),
			"first_bad_seq": v.GetFirstBadSeq(), "problem": v.GetProblem(), "unkeyed": v.GetUnkeyed(), "key_fingerprint": v.GetKeyFingerprint(),
			"pinned_seq": v.GetPinnedSeq(), "pinned_hash": v.GetPinnedHash(), "checked_head_row": v.GetCheckedHeadRow()}, "", "  ")
		fmt.Println(string(out))
	} else {
		if v.GetOk() {
			fmt.Printf("audit chain intact: %d records, head %s\n", v.GetCount(), v.GetHeadHash())
		} else {
			fmt.Printf("audit chain BROKEN at record %d: %s (%d records read, head %s)\n", v.GetFirstBadSeq(), v.GetProblem(), v.GetCount(), v.GetHeadHash())
		}
		for _, line := range verifyChecks(v, config.DataDir(root.DataDir)) {
			fmt.Println("  " + line)
		}
	}
	if !v.GetOk() {
		return &exitError{code: 1, msg: "ai-memory audit verify: the audit log was altered (or is checked against another data dir's audit.key or pin)"}
	}
	return nil
}

// verifyChecks says what a verify compared, a line each.
func verifyChecks(v *aimemoryv1.VerifyAuditResponse, dataDir string) []string {
	lines := []string{fmt.Sprintf("hashes: HMAC-SHA-256 under %s (fingerprint %s)", filepath.Join(dataDir, auditchain.KeyFile), v.GetKeyFingerprint())}
	if n := v.GetUnkeyed(); n > 0 {
		lines = append(lines, fmt.Sprintf("records 1-%d: plain SHA-256, written before the log was keyed; the keyed record after them fixes them", n))
	}
	pin := filepath.Join(dataDir, auditchain.PinFile)
	switch {
	case v.GetPinnedSeq() == 0:
		lines = append(lines, fmt.Sprintf("pin: none in %s (the first verify here, or it was removed): a tail cut before now cannot be ruled out", pin))
	case v.GetOk():
		lines = append(lines, fmt.Sprintf("pin: the log still holds record %d as pinned in %s", v.GetPinnedSeq(), pin))
	default:
		lines = append(lines, fmt.Sprintf("pin: record %d, hash %.16s…, as pinned in %s", v.GetPinnedSeq(), v.GetPinnedHash(), pin))
	}
	if v.GetOk() && v.GetCount() > 0 {
		lines = append(lines, fmt.Sprintf("pinned now: record %d", v.GetCount()))
	}
	if v.GetCheckedHeadRow() {
		lines = append(lines, "head row: the database's audit_head compared with the last record")
	}
	return lines
}
