package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// config is what the forward pass needs from a sentence-transformers
// model directory: config.json (the BERT encoder), sentence_bert_config.json
// (the sequence limit), tokenizer_config.json (lower-casing) and
// 1_Pooling/config.json (how token vectors become one).
type config struct {
	ModelType    string  `json:"model_type"`
	Hidden       int     `json:"hidden_size"`
	Layers       int     `json:"num_hidden_layers"`
	Heads        int     `json:"num_attention_heads"`
	Intermediate int     `json:"intermediate_size"`
	MaxPositions int     `json:"max_position_embeddings"`
	TypeVocab    int     `json:"type_vocab_size"`
	VocabSize    int     `json:"vocab_size"`
	LayerNormEps float64 `json:"layer_norm_eps"`
	Act          string  `json:"hidden_act"`

	maxSeq    int
	lowerCase bool
	pooling   string // "mean" or "cls"
}

func readConfig(dir string) (*config, error) {
	var c config
	if err := readJSON(filepath.Join(dir, "config.json"), &c); err != nil {
		return nil, err
	}
	switch {
	case c.ModelType != "bert":
		return nil, fmt.Errorf("config.json: model_type %.32q; only bert is supported", c.ModelType)
	case c.Act != "gelu":
		return nil, fmt.Errorf("config.json: hidden_act %.32q; only gelu is supported", c.Act)
	case c.Hidden <= 0 || c.Heads <= 0 || c.Hidden%c.Heads != 0:
		return nil, fmt.Errorf("config.json: hidden_size %d is not a multiple of num_attention_heads %d", c.Hidden, c.Heads)
	case c.Layers <= 0 || c.Intermediate <= 0 || c.MaxPositions <= 2 || c.TypeVocab <= 0 || c.VocabSize <= 0:
		return nil, errors.New("config.json: a size is missing or not positive")
	}
	if c.LayerNormEps == 0 {
		c.LayerNormEps = 1e-12
	}

	var st struct {
		MaxSeq    int  `json:"max_seq_length"`
		LowerCase bool `json:"do_lower_case"`
	}
	c.maxSeq = min(512, c.MaxPositions)
	if err := readJSON(filepath.Join(dir, "sentence_bert_config.json"), &st); err == nil && st.MaxSeq > 0 {
		c.maxSeq = min(st.MaxSeq, c.MaxPositions)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	// sentence_bert_config's do_lower_case lower-cases before the
	// tokenizer; the tokenizer's own flag is the one BERT models set.
	var tc struct {
		LowerCase *bool `json:"do_lower_case"`
	}
	c.lowerCase = true
	if err := readJSON(filepath.Join(dir, "tokenizer_config.json"), &tc); err == nil && tc.LowerCase != nil {
		c.lowerCase = *tc.LowerCase
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	c.lowerCase = c.lowerCase || st.LowerCase

	var pc struct {
		CLS  bool `json:"pooling_mode_cls_token"`
		Mean bool `json:"pooling_mode_mean_tokens"`
		Max  bool `json:"pooling_mode_max_tokens"`
		Sqrt bool `json:"pooling_mode_mean_sqrt_len_tokens"`
	}
	c.pooling = "mean"
	if err := readJSON(filepath.Join(dir, "1_Pooling", "config.json"), &pc); err == nil {
		switch {
		case pc.Max || pc.Sqrt || pc.CLS == pc.Mean:
			return nil, errors.New("1_Pooling/config.json: only one of mean or cls token pooling is supported")
		case pc.CLS:
			c.pooling = "cls"
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return &c, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}
