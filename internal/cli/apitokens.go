package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/ai-memory/ai-memory/internal/apitoken"
	"github.com/ai-memory/ai-memory/internal/catalog"
	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/supervisor"
	"github.com/ai-memory/ai-memory/sdk/record"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// tokenCmd manages the API keys of `serve --auth token`.
type tokenCmd struct {
	Create tokenCreateCmd `cmd:"" help:"Create an API key for a principal; the key is printed once."`
	List   tokenListCmd   `cmd:"" help:"List API keys (never their secrets)."`
	Revoke tokenRevokeCmd `cmd:"" help:"Revoke an API key; a running server refuses it at once."`
}

type tokenCreateCmd struct {
	Principal string   `arg:"" help:"The identity the key stands for (an agent id: letters, digits, _ - : @ . /)."`
	Families  []string `help:"Families (or profiles) the key may use, intersected with [mcp.allowlist] (default: what the allowlist allows)." sep:","`
	Namespace []string `help:"Namespaces the key may read and write, each with the namespaces below it, or only itself when written =ns (default: the principal's own name; \"*\" alone = every namespace)." sep:","`
}

func (c *tokenCreateCmd) Run(root *rootCmd) error {
	if err := record.ValidateAgentID("principal", c.Principal); err != nil {
		return &exitError{code: 2, msg: "ai-memory token create: " + err.Error()}
	}
	var fams []string
	if len(c.Families) > 0 {
		// The installed family set, third-party families included (from
		// the plugins' cached descriptions).
		set := catalog.Contract()
		if bins, err := supervisor.Discover(pluginDir(), root.cfg.Plugins); err == nil {
			sup := pluginSupervisor(root, bins)
			set = sup.Catalog()
			defer sup.Close()
		}
		var err error
		if fams, err = catalog.ExpandNames(c.Families, set); err != nil {
			return &exitError{code: 2, msg: "ai-memory token create: --families: " + err.Error()}
		}
	}
	if len(c.Namespace) > 0 {
		if err := apitoken.ValidateNamespaces("--namespace", c.Namespace); err != nil {
			return &exitError{code: 2, msg: "ai-memory token create: " + err.Error()}
		}
	}
	dataDir := config.DataDir(root.DataDir)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	t, key, err := apitoken.Open(dataDir, nil).Create(c.Principal, fams, c.Namespace)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "created token %s for %s (shown once; store it in a secret manager or an environment variable):\n", t.ID, t.Principal)
	fmt.Println(key)
	return nil
}

type tokenListCmd struct {
	JSON bool `help:"JSON output."`
}

func (c *tokenListCmd) Run(root *rootCmd) error {
	list, err := apitoken.Open(config.DataDir(root.DataDir), nil).List()
	if err != nil {
		return err
	}
	if c.JSON {
		for i := range list {
			list[i].Hash = ""
		}
		out, _ := json.MarshalIndent(list, "", "  ")
		fmt.Println(string(out))
		return nil
	}
	if len(list) == 0 {
		fmt.Println("no tokens (ai-memory token create PRINCIPAL)")
		return nil
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tPRINCIPAL\tFAMILIES\tNAMESPACES\tCREATED\tSTATE")
	for _, t := range list {
		state := "live"
		if t.Revoked != nil {
			state = "revoked " + t.Revoked.Format("2006-01-02T15:04:05Z")
		}
		fams, ns := "allowlist", t.Principal
		if t.Families != nil {
			fams = strings.Join(t.Families, ",")
		}
		if t.Namespaces != nil {
			ns = strings.Join(t.Namespaces, ",")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Principal, fams, ns, t.Created.Format("2006-01-02"), state)
	}
	return w.Flush()
}

type tokenRevokeCmd struct {
	ID string `arg:"" help:"The token id (ai-memory token list)."`
}

func (c *tokenRevokeCmd) Run(root *rootCmd) error {
	store := apitoken.Open(config.DataDir(root.DataDir), nil)
	t, err := store.Revoke(c.ID)
	if err != nil {
		return &exitError{code: 1, msg: "ai-memory token revoke: " + err.Error()}
	}
	fmt.Fprintf(os.Stderr, "revoked token %s of %s\n", t.ID, t.Principal)
	all, err := store.List()
	if err != nil {
		return &exitError{code: 1, msg: "ai-memory token revoke: " + err.Error()}
	}
	for _, o := range all {
		if o.Principal == t.Principal && o.Revoked == nil {
			return nil // the principal keeps a key: its webhooks follow that key's grant
		}
	}
	// A principal left with no key makes no call that could narrow its
	// webhooks' grant (webhook.Grants): its subscriptions go with it.
	n, err := unsubscribeAll(root, t.Principal)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("ai-memory token revoke: %s has no key left, but its webhook subscriptions could not be removed: %v", t.Principal, err)}
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "removed %d webhook subscription(s) of %s, which has no key left\n", n, t.Principal)
	}
	return nil
}

// unsubscribeAll removes every webhook subscription principal made.
func unsubscribeAll(root *rootCmd, principal string) (int, error) {
	if hasStore(config.DataDir(root.DataDir)) != nil {
		return 0, nil // nothing was ever stored: no subscription either
	}
	conn, err := engineFor(root, principal)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	ctx := context.Background()
	subs, err := conn.ListSubscriptions(ctx, &aimemoryv1.ListSubscriptionsRequest{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range subs.GetSubscriptions() {
		r, err := conn.Unsubscribe(ctx, &aimemoryv1.UnsubscribeRequest{Id: s.GetId()})
		if err != nil {
			return n, err
		}
		if r.GetRemoved() {
			n++
		}
	}
	return n, nil
}
