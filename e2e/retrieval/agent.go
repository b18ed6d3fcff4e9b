package retrieval

import "fmt"

// Agent is the "agent" collection: memories of the kind coding agents
// keep across sessions (decisions, conventions, commands, owners,
// preferences, incidents, facts about the environment), written by hand
// for six projects, and the question an agent asks about each one
// sessions later, in other words. Most questions share no content word
// with their answer (TestAgentQuestionsParaphrase measures the share), so
// keyword recall alone finds few of them: this is the collection that
// shows what recall by meaning adds. Every memory is stored before any
// question is asked; questions search every namespace, as recall does
// unless asked for one. Each question has one relevant memory (grade 2);
// the memories of the other questions and the distractors (memories on
// the same subjects that do not answer it) fill the rest.
func Agent() *Collection {
	c := &Collection{Name: "agent", Qrels: map[string]map[string]int{}}
	for i, m := range agentMemories {
		id := fmt.Sprintf("a%03d", i+1)
		c.Docs = append(c.Docs, Doc{ID: id, Namespace: m.ns, Title: m.title, Content: m.content, Tags: []string{m.kind}})
		if m.question != "" {
			qid := fmt.Sprintf("aq%03d", len(c.Queries)+1)
			c.Queries = append(c.Queries, Query{ID: qid, Text: m.question})
			c.judge(qid, id, 2)
		}
	}
	for i := range c.Queries {
		c.Queries[i].After = len(c.Docs)
	}
	return c
}

// agentMemory is one memory and the question that should find it ("" for
// a distractor).
type agentMemory struct {
	ns, kind, title, content, question string
}

var agentMemories = []agentMemory{
	// billing-api
	{"billing-api", "decision", "DB choice", "We chose PostgreSQL 16 over MySQL because of logical replication and JSONB.", "which database do we use and why"},
	{"billing-api", "decision", "Message broker", "Invoice events go through RabbitMQ, not Kafka: per-customer ordering matters more than raw throughput here.", "what carries the invoicing notifications between services?"},
	{"billing-api", "convention", "Money amounts", "Store money as integer cents in a bigint column; never use float for currency.", "how should prices be represented in the schema?"},
	{"billing-api", "command", "Run the API locally", "make dev starts the API on port 8080 with docker compose bringing up Postgres and RabbitMQ.", "how do I boot the backend on my laptop?"},
	{"billing-api", "owner", "Stripe integration owner", "Priya owns the Stripe webhook handler; ask her before changing payment retries.", "who should I talk to before touching card charge retry logic?"},
	{"billing-api", "incident", "Double charge incident", "In March a retry storm charged 41 customers twice; idempotency keys on every Stripe call fixed it.", "did we ever bill people two times, and what stopped it?"},
	{"billing-api", "convention", "Migrations", "Schema migrations live in db/migrations and are written with goose; one change per file, never edited after merge.", "where do table alterations go and which tool applies them?"},
	{"billing-api", "decision", "Tax calculation", "Sales tax comes from TaxJar's API; we do not maintain rate tables ourselves.", "who computes VAT for an order?"},
	{"billing-api", "preference", "Error wrapping", "Wrap errors with fmt.Errorf and %w, adding the operation name; no pkg/errors.", "what style do we follow when returning a failure up the stack?"},
	{"billing-api", "command", "Regenerate mocks", "go generate ./... regenerates the mockery mocks after an interface changes.", "an interface changed, how do I refresh the test doubles?"},
	{"billing-api", "fact", "Staging URL", "Staging lives at billing.staging.acme.internal behind the VPN.", "where is the pre-production environment reachable?"},
	{"billing-api", "incident", "Invoice PDF outage", "The PDF renderer ran out of memory on 300-page invoices; we now paginate and cap renders at 50 pages.", "why do huge bills get split into several documents?"},
	{"billing-api", "convention", "API versioning", "Breaking API changes ship under a new /v2 path; /v1 stays for 12 months after a deprecation notice.", "how long must an old endpoint keep working once we replace it?"},
	{"billing-api", "decision", "Currency conversion", "Exchange rates are fetched once a day at 06:00 UTC from the ECB feed and cached in Redis.", "how fresh are the foreign exchange figures?"},
	{"billing-api", "owner", "On-call escalation", "Escalate billing pages to Marcus after 30 minutes; he is the secondary on-call this quarter.", "whom do I wake up if the primary pager does not answer?"},
	{"billing-api", "fact", "Refund limit", "Support can refund up to 500 EUR without approval; above that finance signs off.", "what is the ceiling for giving money back to a customer on my own?"},
	{"billing-api", "command", "Seed test data", "scripts/seed.sh loads 200 fake customers and their subscriptions into the local database.", "how can I fill my dev DB with sample accounts?"},
	{"billing-api", "preference", "Logging", "Use slog with JSON output; never log card numbers or full e-mail addresses.", "what must stay out of the log lines?"},
	{"billing-api", "decision", "Dunning schedule", "Failed renewals are retried after 1, 3 and 7 days, then the subscription is paused.", "what happens when a recurring payment keeps bouncing?"},
	{"billing-api", "convention", "Test naming", "Table-driven tests, one t.Run per case, case names in lower case with spaces.", "how are unit test cases laid out and named?"},
	{"billing-api", "incident", "Clock skew bug", "Invoices dated a day early came from a container running UTC while the job assumed Europe/Berlin; all jobs now use UTC explicitly.", "why did some statements carry yesterday's date?"},
	{"billing-api", "fact", "Stripe API version", "We are pinned to the Stripe API version 2023-10-16; upgrading needs a fixture refresh.", "which revision of the card processor's interface do we target?"},
	{"billing-api", "command", "Replay dead letters", "go run ./cmd/replay --queue invoices.dlq moves dead-lettered messages back to the main queue.", "some events got stuck after failing, how do I push them through again?"},
	{"billing-api", "decision", "PDF library", "Invoices are rendered with a headless Chromium print, not gofpdf, so designers can edit the HTML template.", "how are the downloadable bills produced?"},
	{"billing-api", "preference", "Reviews", "Marcus prefers small pull requests under 300 lines; split refactors from behaviour changes.", "how big should a change be when I ask for review?"},
	// web-app
	{"web-app", "decision", "Frontend framework", "The dashboard is built with React 18 and Vite; we moved off Create React App in 2023.", "what UI stack powers the customer portal?"},
	{"web-app", "convention", "CSS", "Styling uses Tailwind utility classes; no new CSS modules or styled-components.", "how do we write styles for components?"},
	{"web-app", "command", "Run e2e tests", "pnpm test:e2e runs the Playwright suite against a local build on port 4173.", "how do I launch the browser automation checks?"},
	{"web-app", "owner", "Design system", "Lucia maintains the design system package @acme/ui and reviews every change to it.", "who approves edits to the shared button and form widgets?"},
	{"web-app", "preference", "Package manager", "Always use pnpm, never npm or yarn; the lockfile is pnpm-lock.yaml.", "which tool installs JavaScript dependencies here?"},
	{"web-app", "incident", "Blank page after deploy", "A stale service worker served old chunks after the October release; we now version the worker and skipWaiting on update.", "why did users see an empty screen after a new version went live?"},
	{"web-app", "decision", "State management", "Server state lives in TanStack Query; we dropped Redux except for the editor.", "how does the client cache data fetched from the backend?"},
	{"web-app", "convention", "Feature flags", "Feature flags come from LaunchDarkly; a flag is removed within two sprints of full rollout.", "how soon do toggles for finished features get cleaned up?"},
	{"web-app", "fact", "Supported browsers", "We support the last two versions of Chrome, Firefox, Safari and Edge; no Internet Explorer.", "do we still care about IE11?"},
	{"web-app", "command", "Bundle analysis", "pnpm build --report writes dist/stats.html showing what each chunk contains.", "how can I see why the JavaScript payload got so heavy?"},
	{"web-app", "decision", "Auth on the frontend", "Sessions use httpOnly cookies set by the API; tokens are never stored in localStorage.", "where do we keep login credentials in the browser?"},
	{"web-app", "convention", "i18n", "All user-facing strings go through react-intl message ids in src/locales; English and German are shipped.", "how do I add text that must be translated?"},
	{"web-app", "preference", "Component files", "One component per file, named exports only, file name in PascalCase.", "should modules use default exports?"},
	{"web-app", "incident", "Checkout double submit", "Users double-clicked Pay and created two orders; the button is now disabled while the request is pending.", "how did we stop duplicate purchases from rapid clicking?"},
	{"web-app", "fact", "Analytics", "Product analytics go to PostHog, self-hosted at posthog.acme.internal.", "where are user behaviour events tracked?"},
	{"web-app", "owner", "Accessibility", "Tomás leads accessibility audits; every new page needs an axe check before release.", "who signs off on screen reader support?"},
	{"web-app", "command", "Storybook", "pnpm storybook serves the component catalogue on port 6006.", "how do I browse the widget gallery locally?"},
	{"web-app", "decision", "Date handling", "Dates are handled with date-fns in the browser; moment.js was removed to cut 70 KB.", "which library formats times and calendars on the client?"},
	{"web-app", "convention", "API client", "The typed API client is generated from openapi.yaml with orval; never hand-write fetch calls to the backend.", "how should the frontend call server endpoints?"},
	{"web-app", "preference", "Testing library", "Component tests use Testing Library queries by role, not by test id.", "how should I select elements in unit tests for the UI?"},
	{"web-app", "incident", "Font flash", "Pages flashed unstyled text because fonts loaded late; fonts are now preloaded and use font-display swap.", "why did headings briefly render in the wrong typeface?"},
	{"web-app", "fact", "CDN", "Static assets are served from CloudFront with a one-year cache on hashed file names.", "how long do browsers keep our images and scripts?"},
	// infra
	{"infra", "convention", "Deploy day", "Deploys go out on Thursdays after the 2pm standup; never on Fridays.", "when can I ship to production?"},
	{"infra", "decision", "Kubernetes", "Services run on EKS with Karpenter for node autoscaling; we left self-managed kops clusters in 2022.", "what orchestrates our containers in the cloud?"},
	{"infra", "command", "Rollback", "kubectl rollout undo deployment/billing-api -n prod reverts to the previous ReplicaSet.", "how do I go back to the last good release quickly?"},
	{"infra", "owner", "Terraform state", "Ines owns the Terraform state buckets; nobody else runs apply against prod.", "who is allowed to change cloud resources in the live account?"},
	{"infra", "incident", "Disk full", "The nightly backup filled /var on db-2 and Postgres refused writes; backups now go straight to S3.", "why did the database stop accepting inserts one night?"},
	{"infra", "fact", "Secrets", "Secrets live in Vault under kv/apps/<service>; pods read them through the Vault agent injector.", "where are passwords and API keys kept for services?"},
	{"infra", "convention", "Terraform layout", "One Terraform root module per environment under envs/, shared modules under modules/ pinned by tag.", "how is the infrastructure code organised?"},
	{"infra", "command", "Port-forward DB", "kubectl port-forward svc/pg-bouncer 6432 -n prod gives a local tunnel to the production pooler.", "how do I reach the live Postgres from my machine?"},
	{"infra", "decision", "Observability", "Metrics go to Prometheus and Grafana; traces to Tempo; we cancelled Datadog in 2024 over cost.", "which monitoring tools do we use now?"},
	{"infra", "incident", "Certificate expiry", "The wildcard TLS certificate expired in May and took the API down for 40 minutes; cert-manager now renews it.", "what caused the HTTPS outage last spring?"},
	{"infra", "preference", "Infrastructure changes", "Ines wants every infra change as a PR with the terraform plan output pasted in the description.", "what should accompany a request to modify cloud resources?"},
	{"infra", "fact", "Regions", "Production runs in eu-central-1 with a warm standby in eu-west-1.", "which AWS locations host the live system?"},
	{"infra", "command", "Tail logs", "stern -n prod billing-api follows the logs of every billing pod at once.", "how do I watch output from all instances of a service together?"},
	{"infra", "decision", "CI system", "CI runs on GitHub Actions with self-hosted runners for the heavy integration jobs.", "what runs our pipelines on every push?"},
	{"infra", "convention", "Resource limits", "Every Deployment sets CPU requests and memory limits; no pod runs without them.", "are containers allowed to run unbounded?"},
	{"infra", "incident", "DNS cache", "A CoreDNS cache of 30 s kept pods talking to a dead replica after failover; the TTL is now 5 s.", "why were services still reaching the old database host after switchover?"},
	{"infra", "owner", "Networking", "Kofi handles VPC peering, security groups and the VPN; ask him before opening a port.", "who do I ask to allow traffic through the firewall?"},
	{"infra", "fact", "Backup retention", "Database snapshots are kept 35 days; monthly ones for a year.", "how far back can we restore data?"},
	{"infra", "command", "Scale a service", "kubectl scale deployment/web --replicas=6 -n prod; the HPA will take over again within minutes.", "how do I add more copies of a pod by hand?"},
	{"infra", "decision", "Ingress", "Traffic enters through an AWS ALB managed by the load balancer controller; nginx ingress was retired.", "what sits at the edge receiving HTTP requests?"},
	{"infra", "preference", "Bash scripts", "Shell scripts start with set -euo pipefail and pass shellcheck.", "what safety flags do our shell scripts need?"},
	{"infra", "incident", "Cost spike", "A forgotten load test cluster cost 9,000 USD in a weekend; sandboxes now auto-delete after 48 hours.", "why did the cloud bill jump that one time?"},
	// data-pipeline
	{"data-pipeline", "decision", "Orchestrator", "Batch jobs are scheduled with Airflow 2 on MWAA; cron jobs on the old VM are gone.", "what schedules the nightly ETL?"},
	{"data-pipeline", "decision", "Warehouse", "The warehouse is Snowflake; we evaluated BigQuery but stayed for the data sharing with partners.", "where does analytics data end up?"},
	{"data-pipeline", "convention", "dbt models", "dbt models are layered staging, intermediate, marts; marts are the only thing dashboards query.", "which tables should reports read from?"},
	{"data-pipeline", "command", "Backfill a DAG", "airflow dags backfill -s 2024-01-01 -e 2024-01-31 events_daily re-runs a month of the events job.", "how do I reprocess a past date range?"},
	{"data-pipeline", "owner", "Data quality", "Hiro owns the Great Expectations suites and gets paged when a check fails.", "who is responsible when a validation on incoming records breaks?"},
	{"data-pipeline", "incident", "Duplicate rows", "A retried task inserted the same day twice; loads are now idempotent with MERGE on the natural key.", "why did some days show doubled numbers in reports?"},
	{"data-pipeline", "fact", "PII columns", "Columns holding personal data are tagged pii in dbt and masked for every role except analyst_pii.", "who can see customers' personal details in the warehouse?"},
	{"data-pipeline", "preference", "SQL style", "SQL keywords in lower case, trailing commas, CTEs instead of nested subqueries.", "how should queries be formatted?"},
	{"data-pipeline", "command", "Run dbt locally", "dbt build --select state:modified+ --defer --state prod-artifacts builds only what changed.", "how do I compile and test just my edited transformations?"},
	{"data-pipeline", "decision", "Streaming", "Clickstream goes through Kinesis Firehose into S3 as Parquet every five minutes.", "how do web events get into the lake?"},
	{"data-pipeline", "convention", "Partitioning", "Raw tables are partitioned by event date in UTC; never by ingestion time.", "how are big source tables split up?"},
	{"data-pipeline", "incident", "Timezone shift", "Daily revenue was off for users in Asia because a model truncated timestamps to local time; everything is UTC until the mart layer.", "why were sales totals wrong for Asian customers?"},
	{"data-pipeline", "fact", "Freshness SLA", "Marts must be fresh by 07:00 Berlin time for the morning business review.", "by when does the reporting data have to be ready each day?"},
	{"data-pipeline", "owner", "Finance dashboards", "Dana builds the finance dashboards in Looker and owns their definitions of revenue.", "who decides how income is calculated in the reports?"},
	{"data-pipeline", "command", "Query costs", "select * from snowflake.account_usage.query_history order by credits_used desc limit 20 shows the costliest queries.", "how do I find which statements burn the most warehouse credits?"},
	{"data-pipeline", "decision", "Python version", "Pipeline code targets Python 3.11 with Poetry; the Airflow image pins the same.", "which interpreter release do the jobs run on?"},
	{"data-pipeline", "preference", "Notebooks", "Notebooks are for exploration only; anything scheduled moves into a tested module.", "can a Jupyter file be put into production?"},
	{"data-pipeline", "incident", "Schema drift", "A partner renamed a CSV column and the import silently loaded nulls; ingestion now fails on unknown headers.", "what broke when a supplier changed their export format?"},
	// mobile
	{"mobile", "decision", "Cross-platform", "The app is written in Kotlin Multiplatform for shared logic with native SwiftUI and Compose screens.", "is the phone app one codebase or two?"},
	{"mobile", "command", "iOS build", "bundle exec fastlane ios beta builds and uploads a TestFlight release.", "how do I get a new iPhone build to testers?"},
	{"mobile", "owner", "App store releases", "Emeka submits store releases and handles review rejections.", "who pushes versions to Apple and Google?"},
	{"mobile", "convention", "Release train", "Mobile releases ship every second Tuesday; hotfixes only for crashes above 0.5% of sessions.", "how often do new versions of the app go out?"},
	{"mobile", "incident", "Crash on launch", "Version 4.2 crashed on Android 8 because of a missing desugaring flag; min SDK is now 26 and tested in CI.", "why did the app die at startup on older Android phones?"},
	{"mobile", "fact", "Push notifications", "Push goes through Firebase Cloud Messaging for both platforms; APNs keys are in Vault.", "what delivers alerts to phones?"},
	{"mobile", "preference", "Architecture", "Screens follow MVI with a single immutable state per screen.", "which UI pattern do the app screens use?"},
	{"mobile", "decision", "Offline mode", "The app caches the last 30 days of data in SQLDelight so it works without a connection.", "does it keep working in airplane mode?"},
	{"mobile", "command", "Android release", "./gradlew bundleRelease produces the AAB that the Play Console needs.", "how do I produce the package for Google Play?"},
	{"mobile", "fact", "Crash reporting", "Crashes are collected by Sentry; the release health dashboard gates the rollout.", "where do we see stack traces from users' devices?"},
	{"mobile", "incident", "Login loop", "An expired refresh token sent users in a login loop; the app now signs out cleanly when refresh fails.", "why were people stuck signing in over and over?"},
	{"mobile", "convention", "Strings", "Translations are managed in Lokalise and pulled at build time; never edit the generated resource files.", "how do localized texts get into the app?"},
	// ai-memory itself and the agent's own habits
	{"tooling", "convention", "Go formatting", "Use gofumpt, not gofmt, in CI for the Go services.", "which formatter must Go code pass?"},
	{"tooling", "preference", "Commit messages", "Commit subjects are in the imperative mood, under 72 characters, with the issue number at the end.", "how should I word what goes in git history?"},
	{"tooling", "convention", "Branch names", "Branches are named type/short-description, e.g. fix/invoice-rounding.", "what pattern should a new git branch follow?"},
	{"tooling", "preference", "Editor", "The team shares an .editorconfig: 4 spaces in Python, tabs in Go, 2 spaces elsewhere.", "how wide is an indent in our files?"},
	{"tooling", "command", "Lint everything", "make lint runs golangci-lint, eslint and ruff over the whole monorepo.", "one command to run every static checker?"},
	{"tooling", "decision", "Monorepo", "All services live in one monorepo with Bazel-free per-language builds; each service has its own Makefile.", "are projects kept in separate repositories?"},
	{"tooling", "preference", "Tabs over spaces", "I prefer tabs over spaces, and short commit messages in the imperative mood.", "what indentation does the user like?"},
	{"tooling", "convention", "Code review", "Two approvals are required for anything touching payments or auth; one elsewhere.", "how many reviewers must sign off before merging?"},
	{"tooling", "fact", "Go version", "All Go services build with Go 1.22; the toolchain line in go.mod pins it.", "which compiler release do the services use?"},
	{"tooling", "command", "Update dependencies", "renovate opens dependency PRs on Mondays; merge them after CI is green, never by hand edits to go.sum.", "how do library upgrades arrive?"},
	{"tooling", "preference", "Answers", "The user wants short answers with the command first, explanation after.", "how does the developer like replies to be written?"},
	{"tooling", "convention", "TODO comments", "TODOs must carry an issue link: // TODO(#123): ...; bare TODOs fail the linter.", "what format is required for notes about unfinished work in code?"},
	{"tooling", "incident", "Flaky tests", "The e2e suite flaked on CI because tests shared a port; every test now asks the OS for a free port.", "why did integration checks fail randomly in the pipeline?"},
	{"tooling", "fact", "Docs site", "Internal docs are published with MkDocs from the docs/ folder to docs.acme.internal.", "where can I read the engineering handbook?"},
	{"tooling", "preference", "Dependencies", "Prefer the standard library; adding a new third-party module needs a short justification in the PR.", "can I pull in an external package freely?"},
	{"tooling", "decision", "Container base images", "Images are built FROM gcr.io/distroless/static for Go binaries; no shell in production images.", "what do our Docker images start from?"},
	{"tooling", "command", "Local certificates", "mkcert -install && mkcert localhost creates trusted HTTPS certificates for local development.", "how do I get a valid TLS setup on my workstation?"},
	{"tooling", "convention", "Secrets in memory", "Never store secrets in memories; the API key lives in Vault under kv/ai-memory.", "may tokens and passwords be written into the agent's notes?"},
	{"tooling", "owner", "Security contact", "Security issues go to Anika on the security team, privately, never in a public channel.", "whom do I tell about a vulnerability?"},
	{"tooling", "incident", "Leaked token", "A GitHub token was pushed in a test fixture in June; secret scanning now blocks pushes that contain one.", "what prevents credentials from reaching the remote repository?"},
	{"tooling", "fact", "Working hours", "The team spans Berlin and Lisbon; meetings only between 10:00 and 16:00 CET.", "when is it OK to schedule a call with everyone?"},
	{"tooling", "preference", "Pairing", "Sam likes to pair on tricky bugs over a shared tmux session rather than screen sharing.", "how does Sam prefer to debug together?"},
	// more billing-api / infra / web-app memories, asked about more obliquely
	{"billing-api", "fact", "Rate limit", "The public API allows 100 requests per second per key, with bursts to 200.", "how hard can a client hit us before getting throttled?"},
	{"billing-api", "decision", "IDs", "Public identifiers are ULIDs; sequential integer ids are never exposed.", "what do the external object keys look like?"},
	{"billing-api", "convention", "Timestamps", "Timestamps are stored as timestamptz and returned as RFC 3339 in UTC.", "in what format does the API send dates?"},
	{"billing-api", "incident", "Slow report query", "The monthly revenue report took 9 minutes until we added a partial index on paid invoices.", "what made the end-of-month summary fast again?"},
	{"billing-api", "owner", "Finance liaison", "Olga in finance is the contact for chart-of-accounts changes and revenue recognition rules.", "who knows the accounting side of things?"},
	{"infra", "fact", "Database size", "The production Postgres is an r6g.2xlarge with 1 TB gp3 storage, about 60% used.", "how much room is left on the main DB server?"},
	{"infra", "convention", "Alert routing", "Critical alerts page through PagerDuty; warnings only post to #ops-alerts on Slack.", "which notifications wake someone at night?"},
	{"infra", "command", "Restore a snapshot", "scripts/restore-snapshot.sh <snapshot-id> <target> restores an RDS snapshot into a new instance.", "how do I bring back yesterday's data into a fresh server?"},
	{"infra", "decision", "Service mesh", "We decided against a service mesh; mutual TLS is handled by the ALB and app-level certs.", "do we run Istio or Linkerd?"},
	{"web-app", "fact", "Performance budget", "The landing page must stay under 170 KB of JavaScript and a 2.5 s largest contentful paint.", "how fast must the front page load?"},
	{"web-app", "owner", "Product owner", "Rosa is the product owner for the portal; scope questions go to her, not to engineering leads.", "who decides what goes into the next sprint for the dashboard?"},
	{"web-app", "command", "Type check", "pnpm typecheck runs tsc --noEmit across all packages.", "how do I verify the TypeScript compiles without building?"},
	{"data-pipeline", "fact", "Warehouse size", "The Snowflake warehouse is X-Small by default and scales to Medium during the 05:00 load.", "how much compute does the analytics database get?"},
	{"data-pipeline", "convention", "Column naming", "Columns are snake_case; booleans start with is_ or has_; timestamps end in _at.", "how should a new field in a model be named?"},
	{"mobile", "fact", "Minimum versions", "The app supports iOS 16 and Android 8.0 (API 26) and newer.", "what's the oldest phone OS we still run on?"},
	{"mobile", "preference", "Screenshots", "Emeka wants before-and-after screenshots in every UI pull request.", "what pictures should go with a change to a screen?"},
	{"tooling", "decision", "Issue tracker", "Work is tracked in Linear; GitHub issues are only for open-source repos.", "where do we file tickets?"},
	{"tooling", "convention", "Pull request template", "Every PR description has What, Why and How tested sections.", "what headings does a change description need?"},
	{"tooling", "fact", "Ai-memory namespace", "Project memories go in the repository's namespace; personal preferences in global.", "where should notes about my own habits be saved?"},
	{"tooling", "preference", "Error messages", "Error messages start lower case, name the field and the rule, and never end with a period.", "how should failure text be phrased?"},
	{"infra", "owner", "Database administrator", "Chen is the DBA: index changes and vacuum settings on prod go through him.", "who tunes the production database?"},
	{"infra", "incident", "Runaway cron", "A cron job started every minute instead of every hour because of a */1 typo and exhausted connections.", "why did the connection pool run dry that afternoon?"},
	{"billing-api", "command", "Generate an invoice by hand", "go run ./cmd/invoice --customer cus_123 --period 2024-05 issues one invoice outside the schedule.", "how do I bill a single account manually for a month?"},
	{"web-app", "incident", "Memory leak", "The dashboard leaked memory through an un-cleared setInterval in the live chart; effects now return cleanups.", "why did the browser tab grow to gigabytes after an hour?"},
	{"data-pipeline", "command", "Pause a DAG", "airflow dags pause events_daily stops the schedule without deleting history.", "how do I temporarily stop a recurring job?"},
	{"mobile", "command", "Run on simulator", "./gradlew :iosApp:iosSimulatorArm64Test runs the shared tests on the iOS simulator.", "how do I execute the common module's checks for Apple devices?"},
	{"tooling", "command", "Start ai-memory", "ai-memory mcp --profile core is what the harness config runs.", "what does the coding assistant launch to reach its long-term notes?"},
	{"tooling", "decision", "License", "Our open-source libraries are released under Apache-2.0; internal code is proprietary.", "under which terms do we publish public repositories?"},
	{"billing-api", "decision", "Webhook signatures", "Outgoing webhooks are signed with HMAC-SHA256 over the raw body; receivers verify the X-Acme-Signature header.", "how can a partner check that a callback really came from us?"},
	{"web-app", "convention", "Routing", "Routes are defined with React Router data routers in src/routes; lazy-load every page.", "where do I register a new screen's URL in the portal?"},
	{"infra", "fact", "Maintenance window", "Planned maintenance happens Sundays 02:00 to 04:00 UTC, announced a week ahead.", "when are we allowed to take systems offline on purpose?"},
	{"data-pipeline", "owner", "Partner feeds", "Gwen manages the SFTP drops from partners and their onboarding.", "who sets up a new supplier's file transfer?"},
	{"mobile", "decision", "Payments in app", "In-app purchases are not used; subscriptions are sold on the web to avoid store fees.", "can people buy a plan inside the iPhone application?"},
	{"tooling", "preference", "Test first", "For bug fixes the user wants a failing test committed before the fix.", "what should come before the repair when correcting a defect?"},
	// distractors: same subjects, not the answer to any question
	{"billing-api", "fact", "Postgres extensions", "The billing database has pgcrypto and pg_stat_statements enabled.", ""},
	{"billing-api", "fact", "RabbitMQ vhost", "The RabbitMQ vhost for billing is /billing; credentials rotate monthly.", ""},
	{"billing-api", "convention", "Handler layout", "HTTP handlers live in internal/http, one file per resource.", ""},
	{"infra", "fact", "Friday freeze", "The office is closed on Fridays in August.", ""},
	{"infra", "fact", "Standup time", "The platform standup is at 9:30 on Mondays and Wednesdays.", ""},
	{"infra", "command", "List pods", "kubectl get pods -n prod -o wide lists pods with their nodes.", ""},
	{"web-app", "fact", "Design files", "Figma files for the portal are in the Acme Design team space.", ""},
	{"web-app", "convention", "Icons", "Icons come from Lucide; custom SVGs go in src/assets/icons.", ""},
	{"data-pipeline", "fact", "Looker folders", "Shared Looker dashboards live in the Company folder.", ""},
	{"data-pipeline", "fact", "Airflow UI", "The Airflow web UI is at airflow.acme.internal behind SSO.", ""},
	{"mobile", "fact", "Test devices", "The office has a Pixel 6 and an iPhone 12 for manual testing.", ""},
	{"mobile", "fact", "App name", "The app is listed as Acme Billing in both stores.", ""},
	{"tooling", "fact", "Slack channels", "#dev-help is for questions; #deploys announces every production release.", ""},
	{"tooling", "preference", "Meeting notes", "Meeting notes go in the shared drive, one document per week.", ""},
	{"tooling", "fact", "Laptop setup", "New laptops are set up with the dotfiles repo and Homebrew bundle.", ""},
}
