package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// memory is a memory as the core tools answer it in JSON.
type memory struct {
	ID             string          `json:"id"`
	Title          string          `json:"title"`
	Tier           string          `json:"tier"`
	Namespace      string          `json:"namespace"`
	Priority       int             `json:"priority"`
	Confidence     float64         `json:"confidence"`
	Tags           []string        `json:"tags"`
	Source         string          `json:"source"`
	CreatedBy      string          `json:"created_by"`
	UpdatedBy      string          `json:"updated_by"`
	CreatedAt      string          `json:"created_at"`
	UpdatedAt      string          `json:"updated_at"`
	ExpiresAt      string          `json:"expires_at"`
	LastAccessedAt string          `json:"last_accessed_at"`
	AccessCount    int             `json:"access_count"`
	Metadata       json.RawMessage `json:"metadata"`
	Content        string          `json:"content"`
	Score          *float64        `json:"score"`
	Links          []struct {
		SourceID string `json:"source_id"`
		TargetID string `json:"target_id"`
		Relation string `json:"relation"`
	} `json:"links"`
}

// MetadataText is the metadata as indented JSON text.
func (m memory) MetadataText() string {
	if len(m.Metadata) == 0 || string(m.Metadata) == "null" {
		return ""
	}
	return indentJSON(m.Metadata)
}

// indentJSON is raw as indented JSON text (as it is, when it is not JSON).
func indentJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// filters are the Memories page's query: the tool arguments it maps to.
type filters struct {
	Q, Mode, NS, Tag, Tier, Author, Since, Until string
}

func readFilters(v url.Values) filters {
	f := filters{Q: strings.TrimSpace(v.Get("q")), Mode: v.Get("mode"), NS: strings.TrimSpace(v.Get("ns")), Tag: strings.TrimSpace(v.Get("tag")),
		Tier: v.Get("tier"), Author: strings.TrimSpace(v.Get("author")), Since: v.Get("since"), Until: v.Get("until")}
	if f.Mode != "meaning" {
		f.Mode = "keyword"
	}
	return f
}

// Any reports whether a filter beyond the query is set.
func (f filters) Any() bool {
	return f.NS != "" || f.Tag != "" || f.Tier != "" || f.Author != "" || f.Since != "" || f.Until != ""
}

// args are the tool arguments of the filters that apply to tool: recall
// has no tier or author filter.
func (f filters) args(recall bool) map[string]any {
	a := map[string]any{"format": "json"}
	set := func(k, v string) {
		if v != "" {
			a[k] = v
		}
	}
	set("namespace", f.NS)
	set("tags", f.Tag)
	set("since", dayStart(f.Since))
	set("until", dayEnd(f.Until))
	if !recall {
		set("tier", f.Tier)
		set("agent_id", f.Author)
	}
	return a
}

// dayStart and dayEnd turn a date input (2026-12-01) into the RFC 3339
// bound the tools take; anything else is passed on for the tool to refuse.
func dayStart(d string) string {
	if isDate(d) {
		return d + "T00:00:00Z"
	}
	return d
}

func dayEnd(d string) string {
	if isDate(d) {
		return d + "T23:59:59.999999999Z"
	}
	return d
}

func isDate(d string) bool {
	return len(d) == 10 && d[4] == '-' && d[7] == '-' && strings.Trim(d[:4]+d[5:7]+d[8:], "0123456789") == ""
}

// taxNode is a namespace in the tree, with its full path.
type taxNode struct {
	Name     string     `json:"name"`
	Count    int        `json:"count"`
	Subtree  int        `json:"subtree_count"`
	Children []*taxNode `json:"children"`
	Path     string     `json:"-"`
	Current  bool       `json:"-"`
}

func (n *taxNode) setPaths(parent, current string) {
	for _, c := range n.Children {
		c.Path = c.Name
		if parent != "" {
			c.Path = parent + "/" + c.Name
		}
		c.Current = c.Path == current
		c.setPaths(c.Path, current)
	}
}

type memoriesPage struct {
	F         filters
	Heading   string
	Mode      string // the mode the answer reports (recall: keyword or hybrid)
	ModeNote  string
	Memories  []memory
	Tree      *taxNode
	Total     int
	Truncated bool
	Error     string
	Tiers     []string
}

func (memoriesPage) title() string { return "Memories" }

const pageSize = 50

// memoriesPage lists the most recent memories, or searches: keyword
// (memory_search, every word) or by meaning (memory_recall, which says
// whether it ranked by vectors or fell back to keywords).
func (s *Server) memoriesPage(q *request) (string, any, error) {
	f := readFilters(q.r.URL.Query())
	p := memoriesPage{F: f, Tiers: []string{"short", "mid", "long"}}
	var err error
	switch {
	case f.Q == "":
		p.Heading = "Most recent"
		a := f.args(false)
		a["order"], a["limit"] = "recent", pageSize
		var out struct {
			Memories []memory `json:"memories"`
		}
		err = q.call("memory_list", a, &out)
		p.Memories = out.Memories
	case f.Mode == "meaning":
		p.Heading = "By meaning"
		a := f.args(true)
		a["context"], a["limit"] = f.Q, pageSize
		var out struct {
			Mode     string   `json:"mode"`
			Reason   string   `json:"semantic_reason"`
			Memories []memory `json:"memories"`
		}
		err = q.call("memory_recall", a, &out)
		p.Memories, p.Mode, p.ModeNote = out.Memories, out.Mode, out.Reason
		if f.Tier != "" || f.Author != "" {
			p.ModeNote = strings.TrimPrefix(p.ModeNote+"; tier and author filter keyword search only", "; ")
		}
	default:
		p.Heading = "Every word"
		a := f.args(false)
		a["query"], a["limit"] = f.Q, pageSize
		var out struct {
			Results []memory `json:"results"`
		}
		err = q.call("memory_search", a, &out)
		p.Memories, p.Mode = out.Results, "keyword"
	}
	var te *toolError
	if errors.As(err, &te) { // a filter the tool refused: say which, keep the form
		p.Error, err = te.text, nil
	}
	if err != nil {
		return "", nil, err
	}
	if q.can("memory_get_taxonomy") {
		var tax struct {
			Tree      taxNode `json:"tree"`
			Total     int     `json:"total_count"`
			Truncated bool    `json:"truncated"`
		}
		if err := q.call("memory_get_taxonomy", map[string]any{}, &tax); err == nil {
			tax.Tree.setPaths("", f.NS)
			p.Tree, p.Total, p.Truncated = &tax.Tree, tax.Total, tax.Truncated
		}
	}
	return "memories", p, nil
}

// linkRow is a link as the graph tools answer it, seen from one memory.
type linkRow struct {
	ID            string   `json:"id"`
	Depth         int      `json:"depth"`
	Relation      string   `json:"relation"`
	Dir           string   `json:"dir"`
	Title         string   `json:"title"`
	Namespace     string   `json:"namespace"`
	Via           []string `json:"via"`
	ValidFrom     string   `json:"valid_from"`
	ValidUntil    string   `json:"valid_until"`
	ObservedBy    string   `json:"observed_by"`
	InvalidatedBy string   `json:"invalidated_by"`
}

// archived is an archived memory or a superseded version.
type archived struct {
	memory
	ArchivedAt string `json:"archived_at"`
	Reason     string `json:"reason"`
}

type memoryPage struct {
	M        *memory   // the live memory, or nil
	Archived *archived // when it is not live: its archived copy, or nil
	Out, In  []linkRow
	Versions []archived
	Can      struct{ Edit, Promote, Forget, Restore, History, Links, Graph bool }
}

func (p memoryPage) title() string {
	switch {
	case p.M != nil:
		return p.M.Title
	case p.Archived != nil:
		return p.Archived.Title + " (archived)"
	}
	return "Memory"
}

// memoryPage shows one memory: content, metadata, links and its versions
// in the archive; when it is not live, its archived copy and a restore.
func (s *Server) memoryPage(q *request) (string, any, error) {
	id := q.r.PathValue("id")
	var p memoryPage
	p.Can.Edit, p.Can.Promote, p.Can.Forget = q.can("memory_update"), q.can("memory_promote"), q.can("memory_delete")
	p.Can.Restore, p.Can.History = q.can("memory_archive_restore"), q.can("memory_archive_list")
	p.Can.Links, p.Can.Graph = q.can("memory_get_links"), q.can("memory_kg_query")
	var m memory
	err := q.call("memory_get", map[string]any{"id": id, "format": "json"}, &m)
	var te *toolError
	switch {
	case err == nil:
		p.M = &m
		id = m.ID
	case !errors.As(err, &te):
		return "", nil, err
	}
	if p.Can.History {
		var hist struct {
			Archived []archived `json:"archived"`
			Versions []archived `json:"versions"`
		}
		if herr := q.call("memory_archive_list", map[string]any{"id": id}, &hist); herr == nil {
			p.Versions = hist.Versions
			if p.M == nil && len(hist.Archived) > 0 {
				p.Archived = &hist.Archived[0]
			}
		}
	}
	if p.M == nil && p.Archived == nil {
		return "", nil, err // not found live or archived: the tool's own words
	}
	if p.M != nil && p.Can.Links {
		var links struct {
			Out []linkRow `json:"out"`
			In  []linkRow `json:"in"`
		}
		if err := q.call("memory_get_links", map[string]any{"id": id}, &links); err == nil {
			p.Out, p.In = links.Out, links.In
		}
	}
	return "memory", p, nil
}

// editPage is the edit form: the values shown, and (Was) those the memory
// had when the form was first drawn, which the form posts back.
type editPage struct {
	M        memory
	Tags     string
	Priority string
	Was      wasFields
	Error    string
	Tiers    []string
}

type wasFields struct {
	Title, Content, Namespace, Tier, Priority, Tags string
}

func (p editPage) title() string { return "Edit " + p.M.Title }

func (s *Server) editPage(q *request) (string, any, error) {
	var m memory
	if err := q.call("memory_get", map[string]any{"id": q.r.PathValue("id"), "format": "json"}, &m); err != nil {
		return "", nil, err
	}
	tags, prio := strings.Join(m.Tags, ", "), strconv.Itoa(m.Priority)
	return "edit", editPage{M: m, Tags: tags, Priority: prio, Tiers: []string{"short", "mid", "long"},
		Was: wasFields{Title: m.Title, Content: m.Content, Namespace: m.Namespace, Tier: m.Tier, Priority: prio, Tags: tags}}, nil
}

// edit is memory_update with the fields the form changed (the form
// carries what it showed, so an unchanged field is not sent and the
// memory's history gains only a real edit).
func (s *Server) edit(q *request) string {
	id := q.r.PathValue("id")
	form := q.r.PostForm
	args := map[string]any{"id": id}
	for _, k := range []string{"title", "content", "namespace", "tier"} {
		if v := form.Get(k); v != form.Get("was_"+k) {
			args[k] = v
		}
	}
	if v := form.Get("priority"); v != form.Get("was_priority") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return s.editAgain(q, "priority: must be a whole number from 1 to 10")
		}
		args["priority"] = n
	}
	if v := form.Get("tags"); v != form.Get("was_tags") {
		tags := []string{}
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				tags = append(tags, t)
			}
		}
		args["tags"] = tags
	}
	if len(args) == 1 {
		s.outcome(q, "Nothing changed.", nil)
		return "memory/" + url.PathEscape(id)
	}
	err := q.call("memory_update", args, nil)
	var te *toolError
	if errors.As(err, &te) && !isQueued(te.text) {
		return s.editAgain(q, te.text)
	}
	s.outcome(q, "Saved. The previous version is kept in the archive.", err)
	return "memory/" + url.PathEscape(id)
}

// editAgain shows the edit form again with what was typed and why it was
// refused: nothing was changed, and nothing typed is lost.
func (s *Server) editAgain(q *request, why string) string {
	form := q.r.PostForm
	p := editPage{Tiers: []string{"short", "mid", "long"}, Error: why, Tags: form.Get("tags")}
	p.M.ID, p.M.Title, p.M.Content, p.M.Namespace, p.M.Tier = q.r.PathValue("id"), form.Get("title"), form.Get("content"), form.Get("namespace"), form.Get("tier")
	p.Was = wasFields{Title: form.Get("was_title"), Content: form.Get("was_content"), Namespace: form.Get("was_namespace"),
		Tier: form.Get("was_tier"), Priority: form.Get("was_priority"), Tags: form.Get("was_tags")}
	p.Priority = form.Get("priority")
	s.render(q, http.StatusUnprocessableEntity, "edit", p)
	return ""
}

func (s *Server) promote(q *request) string {
	id := q.r.PathValue("id")
	args := map[string]any{"id": id}
	if to := strings.TrimSpace(q.r.PostForm.Get("to_namespace")); to != "" {
		args["to_namespace"] = to
	}
	var out struct {
		Mode string `json:"mode"`
		ID   string `json:"id"`
	}
	err := q.call("memory_promote", args, &out)
	done := "Promoted: it is long-term now and never expires."
	if out.Mode != "" && out.Mode != "tier" {
		done = "Promoted: copied to " + args["to_namespace"].(string) + "."
	}
	s.outcome(q, done, err)
	return "memory/" + url.PathEscape(id)
}

// forget moves one memory to the archive (memory_delete with archive:
// restorable, metadata and links kept).
func (s *Server) forget(q *request) string {
	id := q.r.PathValue("id")
	err := q.call("memory_delete", map[string]any{"id": id, "archive": true}, nil)
	s.outcome(q, "Forgotten: it is in the archive, and Restore brings it back.", err)
	return "memory/" + url.PathEscape(id)
}

// restore brings back an archived memory, or a superseded version.
func (s *Server) restore(q *request) string {
	id := q.r.PathValue("id")
	args := map[string]any{"id": id}
	if v := q.r.PostForm.Get("version"); v != "" {
		args["version"] = v
	}
	err := q.call("memory_archive_restore", args, nil)
	s.outcome(q, "Restored, with a fresh expiry.", err)
	return "memory/" + url.PathEscape(id)
}

// isQueued reports whether a tool's error answer is governance queueing
// the change for approval (the engine's words), not a failure.
func isQueued(text string) bool { return strings.Contains(text, "queued for approval") }
