package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/mattn/go-isatty"

	"github.com/ai-memory/ai-memory/sdk/record"
)

// The lifecycle commands for people (forget, delete, update) call the
// lifecycle family's tools like store and get call core's. The two that
// remove memories write nothing unless told to: without --yes they show
// what would go, and on a terminal ask first. A write a namespace policy
// queues is the tool's error answer (exit status 1, the pending id in
// its message): nothing was written.

// lifecycleProfile is the families these commands need: get resolves and
// shows the memory a delete names.
const lifecycleProfile = "core,lifecycle"

// confirm asks a yes/no question on the terminal; the answer is no unless given.
func confirm(question string) bool { return ask(bufio.NewReader(os.Stdin), question, false) }

// ask asks a yes/no question until the answer is y, yes, n or no (any
// case); an empty answer is def, and the end of input is no.
func ask(in *bufio.Reader, question string, def bool) bool {
	hint := "[y/N]"
	if def {
		hint = "[Y/n]"
	}
	for {
		fmt.Printf("%s %s ", question, hint)
		answer, err := in.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
			return true
		case "n", "no":
			return false
		case "":
			if err != nil {
				fmt.Println()
				return false
			}
			return def
		}
		if err != nil {
			fmt.Println()
			return false
		}
		fmt.Println("please answer y (yes) or n (no)")
	}
}

// mayAsk: a question needs a person at a terminal, and --json output is
// for programs, which --yes serves.
func (o *operator) mayAsk() bool {
	return !o.JSON && isatty.IsTerminal(os.Stdin.Fd()) && isatty.IsTerminal(os.Stdout.Fd())
}

type forgetCmd struct {
	Pattern   []string `arg:"" optional:"" help:"Words a memory must all hold (in its title, content or tags)."`
	Namespace string   `help:"Only this namespace (exact)."`
	Tier      string   `help:"Only this tier." enum:",short,mid,long" default:""`
	Yes       bool     `short:"y" help:"Archive without asking. Without it: a dry run, and on a terminal a question."`
	operator
}

// Run archives the matching memories (restorable). The question follows a
// dry run; the archiving run matches again, so its answer says what it
// archived.
func (c *forgetCmd) Run(root *rootCmd) error {
	args := map[string]any{}
	setIf(args, "pattern", strings.Join(c.Pattern, " "))
	setIf(args, "namespace", c.Namespace)
	setIf(args, "tier", c.Tier)
	if len(args) == 0 {
		return &exitError{code: 2, msg: "ai-memory forget: say what to forget: words, --namespace or --tier"}
	}
	s, err := c.session(root, lifecycleProfile)
	if err != nil {
		return err
	}
	defer s.Close()
	if !c.Yes {
		args["dry_run"] = true
		out, err := s.call("memory_forget", args)
		if err != nil {
			return err
		}
		ask := c.mayAsk()
		var n float64
		if err := c.show(out, func(v map[string]any) {
			n, _ = v["would_archive"].(float64)
			bulkTable(v, "would archive")
			if !ask && n > 0 {
				fmt.Println("dry run: nothing archived; add --yes to archive them")
			}
		}); err != nil || !ask || n == 0 {
			return err
		}
		if !confirm(fmt.Sprintf("Archive %s (ai-memory archive restore ID brings one back)?", plural(int(n), "memory", "memories"))) {
			fmt.Println("nothing archived")
			return nil
		}
		delete(args, "dry_run")
	}
	out, err := s.call("memory_forget", args)
	if err != nil {
		return err
	}
	return c.show(out, func(v map[string]any) {
		bulkTable(v, "archived")
		fmt.Println("ai-memory archive list shows them; ai-memory archive restore ID brings one back")
	})
}

type deleteCmd struct {
	ID      string `arg:"" help:"Id or unique prefix."`
	Archive bool   `help:"Keep it in the archive, restorable with ai-memory archive restore (default: gone for good, with its links)."`
	Yes     bool   `short:"y" help:"Delete without asking. Without it: show what would go, and on a terminal ask."`
	operator
}

func (c *deleteCmd) Run(root *rootCmd) error {
	s, err := c.session(root, lifecycleProfile)
	if err != nil {
		return err
	}
	defer s.Close()
	m, err := getMemory(s, c.ID)
	if err != nil {
		return err
	}
	how := "for good, with its links"
	if c.Archive {
		how = "to the archive (ai-memory archive restore " + cell(m["id"]) + " brings it back)"
	}
	what := fmt.Sprintf("memory %s %s in %s", m["id"], record.Quote(cell(m["title"])), cell(m["namespace"]))
	if !c.Yes {
		switch {
		case c.mayAsk():
			if !confirm("Delete " + what + " " + how + "?") {
				fmt.Println("nothing deleted")
				return nil
			}
		case c.JSON:
			out, _ := json.Marshal(map[string]any{"deleted": false, "dry_run": true, "id": m["id"], "title": m["title"], "namespace": m["namespace"]})
			return c.show(out, nil)
		default:
			fmt.Printf("would delete %s %s\ndry run: nothing deleted; add --yes to delete it\n", what, how)
			return nil
		}
	}
	args := map[string]any{"id": m["id"]}
	if c.Archive {
		args["archive"] = true
	}
	out, err := s.call("memory_delete", args)
	if err != nil {
		return err
	}
	return c.show(out, func(map[string]any) { fmt.Printf("deleted %s %s\n", what, how) })
}

type updateCmd struct {
	ID        string   `arg:"" help:"Id or unique prefix."`
	Title     string   `help:"New title."`
	Content   string   `help:"New content; - reads standard input."`
	Tier      string   `help:"short, mid or long." enum:",short,mid,long" default:""`
	Namespace string   `help:"Move it to this namespace."`
	Tag       []string `help:"A tag (repeatable); replaces all its tags."`
	Priority  int      `help:"1-10."`
	operator
}

// Run edits a memory; its old version is kept in the archive.
func (c *updateCmd) Run(root *rootCmd) error {
	content, err := contentArg(c.Content)
	if err != nil {
		return err
	}
	args := map[string]any{"id": c.ID}
	setIf(args, "title", c.Title)
	setIf(args, "content", content)
	setIf(args, "tier", c.Tier)
	setIf(args, "namespace", c.Namespace)
	setIf(args, "tags", c.Tag)
	setIf(args, "priority", c.Priority)
	if len(args) == 1 {
		return &exitError{code: 2, msg: "ai-memory update: nothing to change: give --title, --content, --tier, --namespace, --tag or --priority"}
	}
	s, err := c.session(root, lifecycleProfile)
	if err != nil {
		return err
	}
	defer s.Close()
	out, err := s.call("memory_update", args)
	if err != nil {
		return err
	}
	return c.show(out, func(v map[string]any) {
		fmt.Printf("updated %v %s (%v, %v); the old version is in the archive\n", v["id"], record.Quote(cell(v["title"])), v["tier"], v["namespace"])
	})
}

// getMemory reads one memory by id or unique prefix.
func getMemory(s *toolSession, id string) (map[string]any, error) {
	out, err := s.call("memory_get", map[string]any{"id": id, "format": "json"})
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(out, &m)
}

// bulkTable prints memory_forget's answer: the count, then the memories it names.
func bulkTable(v map[string]any, verb string) {
	n, _ := v["archived"].(float64)
	if w, ok := v["would_archive"].(float64); ok {
		n = w
	}
	list, _ := v["memories"].([]any)
	if len(list) > 0 {
		t := table.NewWriter()
		t.SetOutputMirror(os.Stdout)
		t.SetStyle(table.StyleLight)
		t.AppendHeader(table.Row{"id", "title", "namespace"})
		for _, r := range list {
			m, _ := r.(map[string]any)
			t.AppendRow(table.Row{m["id"], clipRunes(cell(m["title"]), 60), m["namespace"]})
		}
		t.Render()
	}
	line := verb + " " + plural(int(n), "memory", "memories")
	if more, _ := v["more"].(float64); more > 0 {
		line += fmt.Sprintf(" (%d not listed)", int(more))
	}
	fmt.Println(line)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
