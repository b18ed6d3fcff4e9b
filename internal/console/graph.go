package console

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The graph page draws a memory's neighbourhood (memory_kg_query, both
// directions) as SVG laid out here: the memory in the middle, what one
// hop reaches on a ring around it, what two hops reach on an outer ring,
// each beside the node that reached it. Edges carry their validity; a date
// slider (console.js) dims the links not valid at the chosen time, and
// without script the date field asks the tool for the links valid then.

const (
	graphW, graphH = 900.0, 600.0
	ring1, ring2   = 140.0, 250.0
	graphLimit     = 60 // nodes drawn at most
)

type svgNode struct {
	ID, Title, Namespace, Label string
	X, Y                        float64
	Depth                       int
	Anchor                      string // text-anchor of the label
	LX, LY                      float64
}

type svgEdge struct {
	X1, Y1, X2, Y2 float64
	MX, MY         float64 // the relation label's place
	Relation       string
	From, Until    int64 // validity, Unix milliseconds (0: open)
	Text           string
}

type entityView struct {
	ID, Name, Namespace string
	Aliases             []string
}

type graphPage struct {
	Q, At     string
	Depth     int
	Center    *svgNode
	Entity    *entityView
	Nodes     []svgNode
	Edges     []svgEdge
	Rows      []linkRow
	Truncated bool
	Error     string
	// The slider's range, in days since the Unix epoch, and its labels.
	MinDay, MaxDay int64
	MinLabel       string
	MaxLabel       string
	W, H           float64
}

func (graphPage) title() string { return "Graph" }

// graphPage finds the centre (a memory id, else an entity's name or
// alias), then draws what is linked to it.
func (s *Server) graphPage(q *request) (string, any, error) {
	v := q.r.URL.Query()
	p := graphPage{Q: strings.TrimSpace(v.Get("q")), At: v.Get("at"), Depth: 2, W: graphW, H: graphH}
	if v.Get("depth") == "1" {
		p.Depth = 1
	}
	if p.Q == "" {
		return "graph", p, nil
	}
	var te *toolError
	var m memory
	err := q.call("memory_get", map[string]any{"id": p.Q, "format": "json"}, &m)
	switch {
	case err == nil:
		p.Center = &svgNode{ID: m.ID, Title: m.Title, Namespace: m.Namespace}
	case errors.As(err, &te):
		var e struct {
			Found     bool     `json:"found"`
			ID        string   `json:"entity_id"`
			Name      string   `json:"canonical_name"`
			Namespace string   `json:"namespace"`
			Aliases   []string `json:"aliases"`
		}
		if err := q.call("memory_entity_get_by_alias", map[string]any{"alias": p.Q}, &e); err != nil || !e.Found {
			p.Error = "No memory has that id, and no entity that name or alias."
			return "graph", p, nil
		}
		p.Entity = &entityView{ID: e.ID, Name: e.Name, Namespace: e.Namespace, Aliases: e.Aliases}
		p.Center = &svgNode{ID: e.ID, Title: e.Name, Namespace: e.Namespace}
	default:
		return "", nil, err
	}
	args := map[string]any{"source_id": p.Center.ID, "direction": "both", "max_depth": p.Depth, "limit": graphLimit}
	if p.At != "" {
		args["valid_at"] = dayEnd(p.At)
	}
	var out struct {
		Nodes     []linkRow `json:"nodes"`
		Truncated bool      `json:"truncated"`
	}
	if err := q.call("memory_kg_query", args, &out); err != nil {
		if errors.As(err, &te) {
			p.Error = te.text
			return "graph", p, nil
		}
		return "", nil, err
	}
	p.Rows, p.Truncated = out.Nodes, out.Truncated
	layout(&p, out.Nodes)
	return "graph", p, nil
}

// layout places the centre, the rings and the edges, and the slider's range.
func layout(p *graphPage, rows []linkRow) {
	cx, cy := graphW/2, graphH/2
	c := *p.Center
	c.X, c.Y, c.Label, c.Anchor, c.LX, c.LY = cx, cy, clip(c.Title, 28), "middle", cx, cy+34
	p.Center = &c
	pos := map[string]*svgNode{c.ID: p.Center}
	var first []int
	children := map[string][]int{}
	for i, r := range rows {
		if r.Depth <= 1 || len(r.Via) == 0 {
			first = append(first, i)
		} else {
			parent := r.Via[len(r.Via)-1]
			children[parent] = append(children[parent], i)
		}
	}
	p.Nodes = make([]svgNode, 0, len(rows))
	place := func(r linkRow, angle, radius float64, depth int) {
		cos, sin := math.Cos(angle), math.Sin(angle)
		n := svgNode{ID: r.ID, Title: r.Title, Namespace: r.Namespace, Label: clip(r.Title, 22), Depth: depth,
			X: cx + radius*cos, Y: cy + radius*sin}
		// The label outside the node, away from the centre: beside it on
		// the left and right, above or below it at the top and bottom;
		// across the line when the node's own links go on outwards.
		outward := len(children[r.ID]) > 0
		switch {
		case outward && math.Abs(cos) > 0.3:
			n.LX, n.LY, n.Anchor = n.X, n.Y+25, "middle"
		case outward:
			n.LX, n.LY, n.Anchor = n.X+15, n.Y+4, "start"
		case cos > 0.3:
			n.LX, n.LY, n.Anchor = n.X+15, n.Y+4, "start"
		case cos < -0.3:
			n.LX, n.LY, n.Anchor = n.X-15, n.Y+4, "end"
		case sin < 0:
			n.LX, n.LY, n.Anchor = n.X, n.Y-15, "middle"
		default:
			n.LX, n.LY, n.Anchor = n.X, n.Y+25, "middle"
		}
		p.Nodes = append(p.Nodes, n)
	}
	sector := 2 * math.Pi / float64(max(len(first), 1))
	angles := map[string]float64{}
	for k, i := range first {
		// Half a sector off the vertical: two neighbours sit left and
		// right, where their labels have room.
		a := -math.Pi/2 + (float64(k)+0.5)*sector
		angles[rows[i].ID] = a
		place(rows[i], a, ring1, 1)
	}
	for _, i := range first {
		kids := children[rows[i].ID]
		for k, j := range kids {
			// Spread within the parent's sector, never past its edges.
			a := angles[rows[i].ID] + (float64(k)-float64(len(kids)-1)/2)*sector*0.8/float64(max(len(kids), 1))
			place(rows[j], a, ring2, 2)
		}
	}
	for i := range p.Nodes { // placed: p.Nodes no longer grows
		pos[p.Nodes[i].ID] = &p.Nodes[i]
	}
	minFrom := int64(math.MaxInt64)
	for _, r := range rows {
		to := pos[r.ID]
		from := p.Center
		if len(r.Via) > 0 {
			from = pos[r.Via[len(r.Via)-1]]
		}
		if to == nil || from == nil {
			continue // a node whose parent was cut by the limit
		}
		e := svgEdge{Relation: r.Relation, From: unixMilli(r.ValidFrom), Until: unixMilli(r.ValidUntil)}
		a, b := from, to
		if r.Dir == "in" {
			a, b = to, from
		}
		// From circle edge to circle edge (the arrow's tip on b's), the
		// relation beside the middle of the line.
		dx, dy := b.X-a.X, b.Y-a.Y
		d := max(math.Hypot(dx, dy), 1)
		ra, rb := nodeRadius(a, p.Center), nodeRadius(b, p.Center)+2
		e.X1, e.Y1, e.X2, e.Y2 = a.X+dx/d*ra, a.Y+dy/d*ra, b.X-dx/d*rb, b.Y-dy/d*rb
		e.MX, e.MY = (a.X+b.X)/2-dy/d*10, (a.Y+b.Y)/2+dx/d*10+4
		e.Text = fmt.Sprintf("%s → %s: %s, valid from %s", a.Title, b.Title, r.Relation, dateText(r.ValidFrom))
		if r.ValidUntil != "" {
			e.Text += " until " + dateText(r.ValidUntil)
		}
		p.Edges = append(p.Edges, e)
		if e.From > 0 && e.From < minFrom {
			minFrom = e.From
		}
	}
	today := now().UTC()
	p.MaxDay = today.Unix() / 86400
	p.MinDay = p.MaxDay - 30
	if minFrom != math.MaxInt64 {
		p.MinDay = min(p.MinDay, minFrom/86400000-1)
	}
	p.MinLabel = time.Unix(p.MinDay*86400, 0).UTC().Format(time.DateOnly)
	p.MaxLabel = today.Format(time.DateOnly)
}

// nodeRadius is the radius n is drawn with (graph.html): the centre's is larger.
func nodeRadius(n, center *svgNode) float64 {
	if n == center {
		return 14
	}
	return 9
}

func unixMilli(rfc3339 string) int64 {
	t, err := time.Parse(time.RFC3339Nano, rfc3339)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// dateText is an RFC 3339 time as a date and minute, in UTC.
func dateText(rfc3339 string) string {
	t, err := time.Parse(time.RFC3339Nano, rfc3339)
	if err != nil {
		return rfc3339
	}
	return t.UTC().Format("2006-01-02 15:04") + " UTC"
}

// clip cuts s to n characters, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// fmtFloat writes SVG coordinates without needless digits.
func fmtFloat(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }
