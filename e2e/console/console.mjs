// The web console in headless Chromium, as people use it (run by
// e2e/console_test.go, which passes its config on stdin and checks over
// MCP what this changed). Prints {edited, queued, restored, screenshots}
// as JSON on stdout; progress and failures on stderr; exit 1 on failure.
import fs from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";
import axe from "axe-core";

const cfg = JSON.parse(fs.readFileSync(0, "utf8"));
const w = cfg.world;
const failures = [];
const log = (...a) => console.error(...a);
const check = (ok, msg) => {
  if (!ok) {
    failures.push(msg);
    log("FAIL", msg);
  }
};
const must = (ok, msg) => {
  if (!ok) throw new Error(msg);
};
const result = { screenshots: 0 };
const started = Date.now();
const elapsed = () => ((Date.now() - started) / 1000).toFixed(1) + " s";
fs.mkdirSync(cfg.shots, { recursive: true });

// Debian's Chromium, nothing reaching out; launch() gives it a new empty
// profile (user-data-dir) of its own, removed when it closes.
const browser = await chromium.launch({
  executablePath: cfg.chromium,
  args: ["--no-sandbox", "--disable-background-networking", "--disable-gpu", "--no-first-run",
    "--disable-component-update", "--disable-sync"],
});

async function newPage(viewport = { width: 1280, height: 800 }) {
  const ctx = await browser.newContext({ viewport });
  const page = await ctx.newPage();
  page.on("pageerror", (e) => failures.push(`page error at ${page.url()}: ${e.message}`));
  page.on("console", (m) => {
    // Refused requests are checked by status where the test makes them.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) failures.push(`console error at ${page.url()}: ${m.text()}`);
  });
  page.on("dialog", (d) => failures.push(`unexpected dialog at ${page.url()}: ${d.message()}`));
  return page;
}

const text = (page, sel) => page.locator(sel).first().innerText();

// The local console: a new login link from the sign-in page, read where
// ai-memory ui prints it.
async function newLoginLink(page) {
  const links = () => [...fs.readFileSync(process.env.CONSOLE_UI_STDOUT, "utf8").matchAll(/http:\/\/\S+\/ui\/login\?token=\S+/g)].map((m) => m[0]);
  const before = links().length;
  await page.goto(cfg.local + "/ui/login");
  await page.getByRole("button", { name: "Print a new link on the terminal" }).click();
  await page.getByText("A new login link is on the terminal").waitFor();
  for (let i = 0; i < 100 && links().length === before; i++) await new Promise((r) => setTimeout(r, 50));
  must(links().length > before, "no new login link was printed");
  return links().at(-1);
}

async function signInWithKey(page, key) {
  await page.goto(cfg.serve + "/ui/login");
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/ui\/memories/);
}

// --- The local operator: a login link, once. ---
const op = await newPage();
const link = await newLoginLink(op);
await op.goto(link);
await op.waitForURL(/\/ui\/memories$/);
check((await op.title()).startsWith("Memories"), "the login link lands on the memories");
const other = await newPage();
const again = await other.goto(link);
check(again.status() === 403 && (await other.content()).includes("used already"), "the login link works once");
await other.context().close();

// A memory stored over MCP is there, the most recent first.
check(await op.getByRole("link", { name: "Deploy day" }).count() === 1, "the memory stored over MCP is listed");
check((await text(op, "h1")).startsWith("Most recent"), "the landing lists the most recent memories");

// "/" focuses the search; keyword and meaning searches say their mode.
await op.keyboard.press("/");
check(await op.evaluate(() => document.activeElement?.id) === "q", "/ focuses the search field");
await op.keyboard.type("rollbacks");
await op.keyboard.press("Enter");
await op.waitForURL(/q=rollbacks/);
check(await op.getByRole("link", { name: "Rollback plan" }).count() === 1, "keyword search finds the rollback plan");
check((await text(op, ".mode-line")).includes("keyword"), "a keyword search says its mode");
await op.goto(cfg.local + "/ui/memories?q=how+do+we+undo+a+release&mode=meaning");
check(/Mode: (keyword|hybrid)/.test(await text(op, ".mode-line")), "a search by meaning says the mode recall used");

// Markup in a memory is text.
await op.goto(cfg.local + "/ui/memory/" + w.Markup);
check(await op.evaluate(() => window.__xss) === undefined, "markup in a memory ran as script");
const shown = await op.locator("pre.content").first().innerText();
check(shown.includes("<script>window.__xss = 1</script>") && shown.includes("<b>bold</b>"), "markup in a memory is shown as text: " + shown);
check(await op.locator("pre.content script, pre.content img, pre.content b").count() === 0, "markup in a memory made elements");

// An edit in the console is what memory_get returns (checked by the Go test).
result.edited = "Rollbacks revert the last migration first, then redeploy the previous image; edited in the console " + Date.now() + ".";
await op.goto(cfg.local + "/ui/memory/" + w.Rollback);
await op.getByRole("link", { name: "Edit" }).click();
await op.getByLabel("Content").fill(result.edited);
await op.getByRole("button", { name: "Save" }).click();
await op.waitForURL(new RegExp("/ui/memory/" + w.Rollback + "$"));
check((await text(op, ".notice.ok")).includes("Saved"), "the edit says it was saved");
check((await text(op, "pre.content")) === result.edited, "the memory page shows the edit");
check(await op.locator("ol.versions li").count() >= 1, "the edit's previous version is in the history");

// Forget, then restore.
await op.goto(cfg.local + "/ui/memory/" + w.Wifi);
await op.getByRole("button", { name: "Forget" }).click();
await op.getByText("This memory is in the archive").waitFor();
await op.getByRole("button", { name: "Restore", exact: true }).click();
await op.getByText("Restored, with a fresh expiry.").waitFor();
check(await op.getByRole("link", { name: "Edit" }).count() === 1, "the restored memory is live again");
result.restored = w.Wifi;

// A change governance holds: bob's, approved here by keyboard alone.
await op.goto(cfg.local + "/ui/review");
const approve = op.locator(`form[action$="/pending/${w.Pending}/approve"] button`);
check(await approve.count() === 1, "bob's queued store is pending in the review");
await approve.focus();
await op.keyboard.press("Enter");
await op.waitForURL(/\/ui\/review#pending$/);
check((await text(op, ".notice")).includes("Approved"), "approving from the console runs the action");

// The console's own edit of a governed memory is queued, and says so.
result.queued = "1. Tag. 2. Build. 3. Sign the artefacts. 4. Announce.";
await op.goto(cfg.local + "/ui/memory/" + w.Release + "/edit");
await op.getByLabel("Content").fill(result.queued);
await op.getByRole("button", { name: "Save" }).click();
await op.waitForURL(new RegExp("/ui/memory/" + w.Release + "$"));
check((await text(op, ".notice.pending")).includes("queued for approval"), "a governed edit says it is queued");
check((await text(op, "pre.content")) !== result.queued, "a queued edit is not written yet");
await op.goto(cfg.local + "/ui/review");
check((await op.locator("ol.pending li").filter({ hasText: "cli:operator" }).count()) === 1, "the queued edit is pending in the review");

// The graph draws the stored links, with their time.
await op.goto(cfg.local + "/ui/graph?q=" + w.Deploy);
check(await op.locator(`svg.graph a[href$="/memory/${w.Rollback}"]`).count() === 1, "the graph draws the linked memory");
check(await op.locator("svg.graph .edge").count() >= 2, "the graph draws the links");
check(!(await op.locator("#when").isDisabled()), "the date slider is live");
const min = await op.locator("#when").getAttribute("min");
await op.locator("#when").fill(min);
check(await op.locator("svg.graph .edge:not(.off)").count() === 0, "links not valid yet on the slider's first day are dimmed");
const max = await op.locator("#when").getAttribute("max");
await op.locator("#when").fill(max);
check(await op.locator("svg.graph .edge:not(.off)").count() >= 1, "links valid today are drawn");
await op.goto(cfg.local + "/ui/graph?q=psql");
check((await text(op, "#entity-h")).includes("Postgres") && (await text(op, ".entity")).includes("pg"), "an entity is found by alias, with its aliases");

// A change without the session's CSRF token is refused.
const refused = await op.evaluate(async (u) => (await fetch(u, { method: "POST", body: new URLSearchParams({}) })).status,
  cfg.local + "/ui/memory/" + w.Rollback + "/forget");
check(refused === 403, "a change without the CSRF token is refused: " + refused);

// --- Team mode: each key sees its tenant only; the operator key approves. ---
const b = await newPage();
await signInWithKey(b, cfg.keys.b);
for (const u of ["/ui/memories", "/ui/memories?q=" + w.SecretWord, "/ui/memory/" + w.Secret, "/ui/graph?q=" + w.Secret, "/ui/review", "/ui/activity"]) {
  await b.goto(cfg.serve + u);
  const body = await b.locator("body").innerText();
  check(!body.includes(w.SecretTitle) && !body.includes("hunter2"), "team-b sees team-a's memory at " + u);
}
check(await b.getByRole("link", { name: "Health" }).count() === 0, "team-b, without the operator grant, has no Health page");
await b.context().close();
const a = await newPage();
await signInWithKey(a, cfg.keys.a);
check(await a.getByRole("link", { name: w.SecretTitle }).count() === 1, "team-a sees its own memory");
await a.context().close();
const ops = await newPage();
await signInWithKey(ops, cfg.keys.ops);
check(await ops.getByRole("link", { name: "Health" }).count() === 1, "the operator key has the Health page");
await ops.goto(cfg.serve + "/ui/review");
await ops.locator("ol.pending li").filter({ hasText: "cli:operator" }).getByRole("button", { name: /^Approve/ }).click();
await ops.waitForURL(/\/ui\/review#pending$/);
check((await text(ops, ".notice")).includes("Approved"), "the operator key approves the console's queued edit");
await ops.context().close();

// --- Every page: both sizes, both schemes: no horizontal scroll, no layout
// shift, no serious accessibility violation, every control reachable by
// keyboard. Screenshots of each. ---
const pages = {
  memories: "/ui/memories",
  search: "/ui/memories?q=deploy&ns=shop/api",
  memory: "/ui/memory/" + w.Deploy,
  edit: "/ui/memory/" + w.Rollback + "/edit",
  graph: "/ui/graph?q=" + w.Deploy,
  review: "/ui/review",
  activity: "/ui/activity",
  cost: "/ui/cost",
  health: "/ui/health",
};

async function keyboardReach(page, name) {
  const n = await page.evaluate(() => {
    const sel = 'a[href], button, input:not([type="hidden"]), select, textarea, summary, [tabindex]:not([tabindex="-1"])';
    const visible = (el) => el.getClientRects().length > 0 && !el.closest("details:not([open]) > :not(summary)") && !el.disabled;
    // A radio group is one Tab stop (its checked radio; arrows move within it).
    const radio = (el) => el.type === "radio" && el.name &&
      (document.querySelector(`input[type="radio"][name="${el.name}"]:checked`) ?? document.querySelector(`input[type="radio"][name="${el.name}"]`)) !== el;
    let i = 0;
    for (const el of document.querySelectorAll(sel)) if (visible(el) && !radio(el)) el.setAttribute("data-kb", String(i++));
    return i;
  });
  // The page records what Tab focuses; the keys go in batches, with one
  // look between them. A date field is three Tab stops: room for those.
  await page.evaluate(() => {
    window.__kbSeen = new Set();
    document.addEventListener("focusin", (e) => {
      const k = e.target?.getAttribute?.("data-kb");
      if (k !== null && k !== undefined) window.__kbSeen.add(k);
    });
    document.activeElement?.blur();
  });
  for (let i = 0; i < 3 * n + 10; i += 10) {
    for (let j = 0; j < 10; j++) await page.keyboard.press("Tab");
    if (await page.evaluate(() => window.__kbSeen.size) >= n) break;
  }
  const missed = await page.evaluate(() => [...document.querySelectorAll("[data-kb]")]
    .filter((el) => !window.__kbSeen.has(el.getAttribute("data-kb")))
    .map((el) => el.outerHTML.slice(0, 120)));
  check(missed.length === 0, `${name}: ${missed.length} of ${n} controls are not reachable by Tab: ${missed.join(" | ")}`);
}

log("the flows took", elapsed());
const axeSource = axe.source;
const sweep = op;
for (const [w0, h0] of [[1280, 800], [390, 844]]) {
  await sweep.setViewportSize({ width: w0, height: h0 });
  for (const scheme of ["light", "dark"]) {
    await sweep.emulateMedia({ colorScheme: scheme });
    for (const [name, u] of Object.entries(pages)) {
      const where = `${name} at ${w0}x${h0} ${scheme}`;
      const resp = await sweep.goto(cfg.local + u);
      check(resp.status() === 200, `${where}: status ${resp.status()}`);
      const { scroll, shifts } = await sweep.evaluate(async () => {
        const shifts = await new Promise((done) => {
          const seen = [];
          new PerformanceObserver((l) => seen.push(...l.getEntries())).observe({ type: "layout-shift", buffered: true });
          setTimeout(() => done(seen.map((e) => e.value)), 300);
        });
        return { scroll: document.documentElement.scrollWidth - document.documentElement.clientWidth, shifts };
      });
      check(scroll <= 0, `${where}: scrolls horizontally by ${scroll}px`);
      check(shifts.length === 0, `${where}: layout shifts ${shifts}`);
      await sweep.evaluate(axeSource);
      const violations = await sweep.evaluate(async () =>
        (await window.axe.run(document, { resultTypes: ["violations"] })).violations
          .filter((v) => v.impact === "serious" || v.impact === "critical")
          .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`));
      check(violations.length === 0, `${where}: accessibility: ${violations.join("; ")}`);
      await sweep.screenshot({ path: path.join(cfg.shots, `${name}-${w0}-${scheme}.png`), fullPage: true });
      result.screenshots++;
      if (scheme === "light") await keyboardReach(sweep, where); // after the picture: it leaves a focus ring
    }
  }
}
// The sign-in pages too.
for (const [name, u] of [["signin-team", cfg.serve + "/ui/login"], ["signin-local", cfg.local + "/ui/login"]]) {
  const p = await newPage();
  await p.goto(u);
  await p.evaluate(axeSource);
  const violations = await p.evaluate(async () => (await window.axe.run(document)).violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id));
  check(violations.length === 0, `${name}: accessibility: ${violations.join(", ")}`);
  await p.screenshot({ path: path.join(cfg.shots, `${name}-1280-light.png`) });
  result.screenshots++;
  await keyboardReach(p, name);
  await p.context().close();
}

await browser.close();
log("with every page swept:", elapsed());
if (failures.length > 0) {
  log(`${failures.length} failures:\n` + failures.join("\n"));
  process.exit(1);
}
console.log(JSON.stringify(result));
