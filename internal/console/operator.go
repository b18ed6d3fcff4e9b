package console

import (
	"context"
	"slices"
)

// Check is one line of `ai-memory doctor`: ok, fail, or a state that is
// not a failure (none, missing, idle, off, on).
type Check struct {
	Name, Status, Detail string
}

// Bar is one measured surface: tools and their cl100k tokens.
type Bar struct {
	Name          string
	Tools, Tokens int
}

// Cost is `ai-memory doctor --tokens`: what each family's tool
// definitions cost, and each profile's whole tools/list.
type Cost struct {
	Tokenizer string
	Families  []Bar
	Profiles  []Bar
}

// chartRow is a bar laid out for the SVG chart.
type chartRow struct {
	Bar
	Y, W float64
}

type chart struct {
	Rows   []chartRow
	Height float64
}

const (
	chartBarH, chartGap = 22.0, 10.0
	chartBarMax         = 320.0 // the longest bar, in the 560-wide viewBox
)

// barChart lays out bars scaled to the largest.
func barChart(bars []Bar) chart {
	top := 1
	for _, b := range bars {
		top = max(top, b.Tokens)
	}
	var c chart
	for i, b := range bars {
		c.Rows = append(c.Rows, chartRow{Bar: b, Y: float64(i) * (chartBarH + chartGap), W: max(2, chartBarMax*float64(b.Tokens)/float64(top))})
	}
	c.Height = float64(len(bars))*(chartBarH+chartGap) - chartGap + 2
	return c
}

type costPage struct {
	Tokenizer          string
	Families, Profiles chart
	Error              string
}

func (costPage) title() string { return "Cost" }

func (s *Server) costPage(q *request) (string, any, error) {
	ctx, cancel := context.WithTimeout(q.r.Context(), callTimeout)
	defer cancel()
	c, err := s.opts.Operator.Cost(ctx)
	if err != nil {
		return "cost", costPage{Error: err.Error()}, nil
	}
	fams := slices.Clone(c.Families)
	slices.SortStableFunc(fams, func(a, b Bar) int { return b.Tokens - a.Tokens })
	return "cost", costPage{Tokenizer: c.Tokenizer, Families: barChart(fams), Profiles: barChart(c.Profiles)}, nil
}

type healthPage struct {
	Checks  []Check
	Healthy bool
}

func (healthPage) title() string { return "Health" }

func (s *Server) healthPage(q *request) (string, any, error) {
	ctx, cancel := context.WithTimeout(q.r.Context(), callTimeout)
	defer cancel()
	p := healthPage{Checks: s.opts.Operator.Health(ctx), Healthy: true}
	for _, c := range p.Checks {
		p.Healthy = p.Healthy && c.Status != "fail"
	}
	return "health", p, nil
}
