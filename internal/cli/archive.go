package cli

import (
	"fmt"
	"os"

	"github.com/jedib0t/go-pretty/v6/table"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// The archive commands call the archive family's tools by name, as store
// and get call core's: what forget and delete --archive removed, listed
// and brought back.

type archiveCmd struct {
	List    archiveListCmd    `cmd:"" help:"List archived memories, most recently archived first; with an id, that memory's archived state and superseded versions."`
	Restore archiveRestoreCmd `cmd:"" help:"Bring an archived memory back (a fresh expiry for its tier)."`
}

type archiveListCmd struct {
	ID        string `arg:"" optional:"" help:"One archived memory's exact id: its archived state and superseded versions."`
	Namespace string `help:"Only this namespace (exact)."`
	Limit     int    `help:"At most this many (1-1000, default 50)."`
	Offset    int    `help:"Skip this many (the next page)."`
	operator
}

func (c *archiveListCmd) Run(root *rootCmd) error {
	args := map[string]any{}
	setIf(args, "id", c.ID)
	setIf(args, "namespace", c.Namespace)
	setIf(args, "limit", c.Limit)
	setIf(args, "offset", c.Offset)
	out, err := c.callIn(root, "archive", "memory_archive_list", args)
	if err != nil {
		return err
	}
	return c.show(out, func(v map[string]any) {
		archived, _ := v["archived"].([]any)
		versions, _ := v["versions"].([]any)
		if len(archived) == 0 && len(versions) == 0 {
			fmt.Println("the archive is empty")
			return
		}
		archiveTable(archived, "archived", true)
		if len(versions) > 0 {
			archiveTable(versions, "version (--version)", false)
		}
		if total, _ := v["total"].(float64); int(total) > len(archived) {
			fmt.Printf("%d of %d archived memories; --offset %d shows the next\n", len(archived), int(total), c.Offset+len(archived))
		}
		fmt.Println("bring one back: ai-memory archive restore ID")
	})
}

// archiveTable prints archived rows (or superseded versions): full ids,
// since restore takes an exact one; times to the minute when short (a
// version's is its name for restore --version, so it stays whole).
func archiveTable(rows []any, what string, short bool) {
	t := table.NewWriter()
	t.SetOutputMirror(os.Stdout)
	t.SetStyle(table.StyleLight)
	t.AppendHeader(table.Row{"id", "title", "namespace", "tier", what, "reason", "content"})
	for _, r := range rows {
		m, _ := r.(map[string]any)
		at := cell(m["archived_at"])
		if short {
			at = minute(at)
		}
		t.AppendRow(table.Row{m["id"], clipRunes(cell(m["title"]), 40), m["namespace"], m["tier"], at,
			m["reason"], clipRunes(oneLine(cell(m["content"])), 40)})
	}
	t.Render()
}

type archiveRestoreCmd struct {
	ID      string `arg:"" help:"The archived memory's exact id (ai-memory archive list)."`
	Version string `name:"archived-at" help:"Restore this superseded version instead (its archived_at, from archive list ID)."`
	Merge   bool   `help:"When a live memory now holds its title, merge into it instead of failing."`
	operator
}

func (c *archiveRestoreCmd) Run(root *rootCmd) error {
	args := map[string]any{"id": c.ID}
	setIf(args, "version", c.Version)
	if c.Merge {
		args["on_conflict"] = "merge"
	}
	out, err := c.callIn(root, "archive", "memory_archive_restore", args)
	if err != nil {
		return err
	}
	return c.show(out, func(v map[string]any) {
		line := fmt.Sprintf("restored %v %s in %v (tier %v", v["id"], record.Quote(cell(v["title"])), v["namespace"], v["tier"])
		if exp := cell(v["expires_at"]); exp != "" {
			line += ", expires " + exp
		}
		line += ")"
		if into := cell(v["merged_into"]); into != "" {
			line += " merged into " + into
		}
		fmt.Println(line)
	})
}
