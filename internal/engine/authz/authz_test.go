package authz

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ai-memory/ai-memory/internal/engine/caller"
)

func as(c caller.Caller) context.Context { return caller.NewContext(context.Background(), c) }

// The read rule, for each kind of caller and namespace.
func TestReads(t *testing.T) {
	all := caller.Caller{Principal: "ai:me", Family: "core", Scope: caller.AllNamespaces}
	teamA := caller.Caller{Principal: "team-a", Family: "core", Scope: "team-a shared/"}
	notes := caller.Caller{Principal: "ai:me", Family: "notes", Scope: caller.AllNamespaces}
	scopedNotes := caller.Caller{Principal: "team-a", Family: "notes", Scope: "team-a"}
	for _, tc := range []struct {
		who  string
		ctx  context.Context
		ns   string
		want bool
	}{
		{"no caller", context.Background(), "global", false},
		{"no caller", context.Background(), "_messages/ai:me", false},
		{"empty scope", as(caller.Caller{Principal: "ai:me"}), "global", false},
		{"empty scope, own inbox", as(caller.Caller{Principal: "ai:me"}), "_messages/ai:me", true},
		{"all", as(all), "global", true},
		{"all", as(all), "team-a/x", true},
		{"all, own inbox", as(all), "_messages/ai:me", true},
		{"all, another's inbox", as(all), "_messages/ai:you", false},
		{"all, a family's keyspace", as(all), "_family/notes", false},
		{"all, the registry", as(all), "_agents", true},
		{"team-a", as(teamA), "team-a", true},
		{"team-a", as(teamA), "team-a/x", true},
		{"team-a", as(teamA), "team-ab", false},
		{"team-a", as(teamA), "shared/x", true},
		{"team-a", as(teamA), "global", false},
		{"team-a, own inbox", as(teamA), "_messages/team-a", true},
		{"team-a, the registry", as(teamA), "_agents", false},
		{"team-a, the registry's own operation", AsOwner(as(teamA), GuardAgents), "_agents", true},
		{"team-a, messaging", AsOwner(as(teamA), GuardMessages), "_messages/team-b", false},
		{"notes, its keyspace", as(notes), "_family/notes/archive", true},
		{"notes, another keyspace", as(notes), "_family/notesx", false},
		{"notes scoped, its keyspace", as(scopedNotes), "_family/notes", false},
		{"system", System(context.Background()), "_messages/ai:you", true},
		{"system", System(context.Background()), "_family/notes", true},
	} {
		if got := Of(tc.ctx).Reads(tc.ns); got != tc.want {
			t.Errorf("%s reads %s = %v, want %v", tc.who, tc.ns, got, tc.want)
		}
	}
}

// The write rule: a guarded namespace is its owner's operation's alone, a
// family's keyspace that family's within its scope, the rest the scope's.
func TestCheckWrite(t *testing.T) {
	all := as(caller.Caller{Principal: "ai:me", Family: "core", Scope: caller.AllNamespaces})
	teamA := as(caller.Caller{Principal: "team-a", Family: "notes", Scope: "team-a"})
	for _, tc := range []struct {
		who     string
		ctx     context.Context
		ns      string
		refusal string // "" = allowed
	}{
		{"no caller", context.Background(), "global", "a write needs a verified caller"},
		{"empty scope", as(caller.Caller{Principal: "ai:me"}), "global", "outside the namespaces ai:me may use (none)"},
		{"all", all, "anything/at/all", ""},
		{"all", all, "_messages/ai:me", "is guarded"},
		{"all", all, "_agents", "is guarded"},
		{"all", all, "_family/notes", "is guarded"},
		{"all, messaging", AsOwner(all, GuardMessages), "_messages/ai:you", ""},
		{"all, messaging", AsOwner(all, GuardMessages), "_agents", "is guarded"},
		{"team-a", teamA, "team-a/x", ""},
		{"team-a", teamA, "team-b", "outside the namespaces team-a may use (team-a); store refused"},
		{"team-a, its family's keyspace", teamA, "_family/notes", "outside the namespaces team-a may use"},
		{"team-a, another family's keyspace", teamA, "_family/todo", "is guarded"},
		{"team-a", teamA, "", ""},
	} {
		err := Of(tc.ctx).CheckWrite("store", tc.ns)
		switch {
		case tc.refusal == "" && err != nil:
			t.Errorf("%s writing %s: %v", tc.who, tc.ns, err)
		case tc.refusal != "" && (err == nil || !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), tc.refusal)):
			t.Errorf("%s writing %s: %v, want a refusal saying %q", tc.who, tc.ns, err, tc.refusal)
		}
	}
}

// Only the grant of every namespace, or the engine's own work, is shown
// store-wide figures.
func TestEverything(t *testing.T) {
	for ctx, want := range map[context.Context]bool{
		context.Background(): false,
		as(caller.Caller{Principal: "x", Scope: "team-a"}):             false,
		as(caller.Caller{Principal: "x", Scope: "team-a *"}):           false,
		as(caller.Caller{Principal: "x", Scope: caller.AllNamespaces}): true,
		System(context.Background()):                                   true,
	} {
		if got := Of(ctx).Everything(); got != want {
			t.Errorf("Everything() = %v, want %v", got, want)
		}
	}
	if !For(caller.Caller{Scope: caller.AllNamespaces}).Everything() || For(caller.Caller{Scope: "a"}).Everything() {
		t.Error("For: Everything follows the scope")
	}
}
