// ai-memory console: the little that needs a script. Every page works
// without it; nothing here inserts content, so nothing shifts as it runs.
"use strict";

// "/" focuses the page's search field (when not typing elsewhere).
document.addEventListener("keydown", (e) => {
  if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement || (t && t.isContentEditable)) return;
  const q = document.getElementById("q");
  if (q) {
    e.preventDefault();
    q.focus();
    q.select();
  }
});

// The graph's date slider: links not valid on the chosen day are dimmed.
// A link is valid from valid_from until valid_until (open when 0).
document.addEventListener("DOMContentLoaded", () => {
  const slider = document.getElementById("when");
  const out = document.getElementById("when-out");
  if (!slider || !out) return;
  const day = 86400000;
  const edges = Array.from(document.querySelectorAll("svg.graph .edge"));
  const show = () => {
    const end = (Number(slider.value) + 1) * day; // the whole chosen day
    out.value = new Date(Number(slider.value) * day).toISOString().slice(0, 10);
    for (const g of edges) {
      const from = Number(g.dataset.from || 0);
      const until = Number(g.dataset.until || 0);
      const valid = from < end && (until === 0 || until >= end - day);
      g.classList.toggle("off", !valid);
    }
  };
  slider.disabled = false;
  slider.addEventListener("input", show);
  show();
});
