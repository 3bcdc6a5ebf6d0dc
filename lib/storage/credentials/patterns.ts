/**
 * The credential classes State Flow recognises beyond secretlint's preset (issues 24 and 33),
 * each found in the text the check reads (`credentials.ts`: every field as `key: value`). Shapes
 * are modelled on gitleaks' default rules: provider keys by their prefixes, JWTs, bearer and
 * `Authorization` values, AWS secret access keys by their context, and gitleaks'
 * "generic-api-key" idea — a secret-sounding name assigned a value whose Shannon entropy is high
 * — so a key whose exact shape no rule knows is still refused when it is *assigned* as one.
 * Ordinary technical text (hashes, UUIDs, versions, prose) has no such name before it, or is
 * low in entropy, or reads as a reference. Every quantifier is bounded or over a class the next
 * literal cannot extend, so nothing backtracks; every pattern starts with a literal or a short
 * alternation of them, so text that holds none is passed over at the engine's search speed.
 */

import { type HintGroup, HintScanner } from "./scan.js";

/** One finding in the text, before it is mapped to its field. */
export interface RawFinding {
	pos: number;
	end: number;
	kind: string;
	/** Found by its name or context, not its shape: a shape-specific finding of the same text names it better. */
	generic?: true;
}

/**
 * Tokens a provider issues, by the prefix it gives them (gitleaks' rules, loosened to each
 * family). `hints`: text every match holds. A pattern runs only over a text that holds one of its
 * hints, found for all patterns at once (`scanFields`).
 */
const PROVIDER_TOKENS: ReadonlyArray<{ kind: string; hints: readonly string[]; re: RegExp }> = [
	// Long-term (AKIA) and temporary (ASIA) access key ids; AWS's documented example is let through.
	{ kind: "an AWS access key", hints: ["AKIA", "ASIA"], re: /\b(?:AKIA|ASIA)[A-Z2-7]{16}\b/g },
	{ kind: "a Google API key", hints: ["AIza"], re: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
	{ kind: "a Google OAuth credential", hints: ["GOCSPX-", "ya29."], re: /\b(?:GOCSPX-[A-Za-z0-9_-]{24,40}|ya29\.[A-Za-z0-9_-]{30,2000})/g },
	{ kind: "an OpenAI API key", hints: ["sk-"], re: /\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,300}/g },
	{ kind: "an Anthropic API key", hints: ["sk-ant-"], re: /\bsk-ant-[a-z]{3,6}\d{2}-[A-Za-z0-9_-]{20,300}/g },
	{ kind: "an OpenRouter API key", hints: ["sk-or-v1-"], re: /\bsk-or-v1-[a-f0-9]{40,80}/g },
	{
		kind: "a Stripe key",
		hints: ["k_live_", "k_test_", "k_prod_", "whsec_"],
		re: /\b(?:[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,200}|whsec_[A-Za-z0-9]{24,100})/g,
	},
	{ kind: "an npm token", hints: ["npm_"], re: /\bnpm_[A-Za-z0-9]{30,80}\b/g },
	{ kind: "a GitLab token", hints: ["gl"], re: /\bgl(?:pat|ptt|dt|rt|soat|cbt|ffct|oas|imt|ft|agent|wt)-[A-Za-z0-9_-]{20,100}/g },
	{ kind: "a GitHub token", hints: ["gh", "github_pat_"], re: /\b(?:gh[pousr]_[A-Za-z0-9]{30,250}|github_pat_[A-Za-z0-9_]{40,250})/g },
	{ kind: "a Hugging Face token", hints: ["hf_", "api_org_"], re: /\b(?:hf_|api_org_)[A-Za-z0-9]{30,40}\b/g },
	{ kind: "a Groq API key", hints: ["gsk_"], re: /\bgsk_[A-Za-z0-9]{40,60}\b/g },
	{ kind: "an xAI API key", hints: ["xai-"], re: /\bxai-[A-Za-z0-9]{60,100}\b/g },
	{ kind: "a Perplexity API key", hints: ["pplx-"], re: /\bpplx-[A-Za-z0-9]{40,60}\b/g },
	{ kind: "a Replicate API token", hints: ["r8_"], re: /\br8_[A-Za-z0-9]{30,40}\b/g },
	{ kind: "a HashiCorp Vault token", hints: ["hvs.", "hvb.", "hvr."], re: /\bhv[sbr]\.[A-Za-z0-9_-]{24,300}/g },
	{ kind: "a DigitalOcean token", hints: ["_v1_"], re: /\bdo[opr]_v1_[a-f0-9]{64}\b/g },
	{ kind: "a Doppler token", hints: ["dp."], re: /\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,50}\b/g },
	{ kind: "a PyPI token", hints: ["pypi-"], re: /\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,300}/g },
	{ kind: "a Postman API key", hints: ["PMAK-"], re: /\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b/g },
	{ kind: "a Sentry token", hints: ["sntry"], re: /\bsntry[su]_[A-Za-z0-9_=+/.-]{30,300}/g },
	{ kind: "a Heroku API key", hints: ["HRKU-"], re: /\bHRKU-[A-Za-z0-9_-]{40,80}/g },
	{ kind: "a Supabase token", hints: ["sbp_"], re: /\bsbp_[a-f0-9]{40}\b/g },
	{ kind: "a PlanetScale token", hints: ["pscale_"], re: /\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}/g },
	{ kind: "an Atlassian API token", hints: ["ATATT3"], re: /\bATATT3[A-Za-z0-9_=-]{150,250}/g },
	{ kind: "an Airtable token", hints: ["pat"], re: /\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b/g },
	{ kind: "a Netlify token", hints: ["nfp_"], re: /\bnfp_[A-Za-z0-9]{36,50}\b/g },
	{ kind: "a Fly.io token", hints: ["fo1_", "fm1", "fm2"], re: /\b(?:fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,2000})/g },
	{ kind: "a Telegram bot token", hints: [":AA"], re: /\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b/g },
	{ kind: "a Twilio API key", hints: ["SK"], re: /\bSK[0-9a-f]{32}\b/g },
	{ kind: "an age secret key", hints: ["AGE-SECRET-KEY-1"], re: /\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b/g },
	// PEM blocks too short for the preset's 100-character floor (Ed25519) or with a body it does not recognise.
	{ kind: "a private key", hints: ["PRIVATE KEY"], re: /-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----[A-Za-z0-9+/=\s\\]{40,20000}-----END /g },
	{ kind: "an Azure account key", hints: ["AccountKey", "SharedAccessKey"], re: /\b(?:AccountKey|SharedAccessKey)\s{0,4}=\s{0,4}[A-Za-z0-9+/]{40,200}={0,2}/g },
	{ kind: "an Azure SAS signature", hints: ["sig="], re: /[?&]sig=[A-Za-z0-9%+/=]{40,200}/g },
	{ kind: "an Azure client secret", hints: ["Q~"], re: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g },
	// A JSON Web Token: a header and a payload that are base64url JSON objects (`{"` is `eyJ`), signed or not.
	{ kind: "a JSON Web Token", hints: ["eyJ"], re: /\beyJ[A-Za-z0-9_-]{8,4000}\.eyJ[A-Za-z0-9_-]{8,20000}\.[A-Za-z0-9_-]{0,4000}/g },
];

/** The access key id of AWS's documentation, in countless READMEs (the preset lets it through too). */
const AWS_EXAMPLE_ID = "AKIAIOSFODNN7EXAMPLE";

/**
 * A value that reads as a reference or a placeholder, not a secret: an environment variable or
 * template (`$DB_PASSWORD`, `${…}`, `{{…}}`, `<…>`, `%…%`), a masked value, an upper-case
 * variable name (`DB_PASSWORD`), a lower-case word (`required`, `redacted`), a code expression
 * reading the environment, a 1Password item, a file path (`~/.pgpass`, `/run/secrets/db`), a URL
 * (`op://…` references too), an AWS ARN (a Secrets Manager entry), or a value naming itself a placeholder (`your-api-key-here`, gitleaks'
 * stopword idea, kept to the words that mean "not real").
 */
export function isReference(value: string): boolean {
	return (
		/^[$%<{*~./]/.test(value) ||
		/^[A-Z][A-Z0-9_]*$/.test(value) ||
		/^[a-z]+$/.test(value) ||
		/^(?:process\.env|os\.environ|env|ENV|System\.getenv)\b/.test(value) ||
		/^1Password\b/i.test(value) ||
		/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ||
		/^arn:aws/.test(value) ||
		/example|sample|placeholder|dummy|changeme|redacted|xxxxxx|your[_-]|[_-]here$/i.test(value)
	);
}

/** Shannon entropy of `text` in bits per character (gitleaks' measure for generic secrets). */
export function entropy(text: string): number {
	const counts = new Map<string, number>();
	for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
	let h = 0;
	const n = [...text].length;
	for (const k of counts.values()) {
		const p = k / n;
		h -= p * Math.log2(p);
	}
	return h;
}

/** gitleaks' threshold for its generic-api-key rule: random keys are above it, words and versions below. */
export const GENERIC_ENTROPY = 3.5;

/**
 * A value assigned to a secret-sounding name: `DB_PASSWORD=…`, `"client_secret": "…"`,
 * `OPENAI_API_KEY=…`, `github_token: …`, `x-api-key: …` (the name ends with the keyword or
 * continues it after a separator: `SECRET_KEY_BASE`). Group 1 the keyword, 2 what follows it
 * in the name, 4 the value.
 */
const ASSIGNED =
	/(passw(?:or)?d|passphrase|secret|token|api[_.-]?key|apikey|access[_.-]?key|private[_.-]?key|credentials?|creds|auth[_.-]?(?:key|token))((?:[_.-][A-Za-z0-9_.-]{0,15})?)["'`]?\s{0,4}(?::=|=>|[:=])\s{0,4}(["'`]?)([^\s"'`,;]{6,1000})\3/gi;

/** Keywords whose values are secrets at any length of six or more (no entropy asked): passwords and secrets. */
const PASSWORD_WORD = /^(?:passw(?:or)?d|passphrase|secret)$/i;

/** What a secret-named assignment is called in the refusal. */
function assignedKind(word: string): string {
	if (/^secret$/i.test(word)) return "a secret";
	return PASSWORD_WORD.test(word) ? "a password" : "an API key or token";
}

/** What follows the keyword in names that hold no secret: `token_url`, `secret_name`, `api_key_id`, `token_hash`, a file's extension (`auth-token.ts`). */
const NOT_SECRET_NAME =
	/^[_.-](?:ids?|names?|ur[il]s?|endpoint|file|path|len(?:gth)?|size|type|kind|count|expir(?:y|es|es_at|ation)|ttl|hash|sha\d*|digest|header|prefix|format|version|env|var|ref|field|label|policy|scope|store|arn|rotation)$|^\.[a-z0-9]{1,5}$/i;

/** `Authorization: Bearer …` (Basic, Token, Digest, or a bare value), and a `Bearer …` value anywhere. */
const AUTHORIZATION = /\bauthorization["']?\s{0,4}[:=]\s{0,4}["']?(?:(basic|bearer|token|digest)\s+)?([A-Za-z0-9._~+/-]{12,4000}={0,2})/gi;
const BEARER = /\bbearer\s+([A-Za-z0-9._~+/-]{20,4000}={0,2})/gi;

/** Whether a value with no telling name reads as a random key: long enough, not only letters, gitleaks' entropy. */
function random(value: string): boolean {
	return value.length >= 10 && !/^[A-Za-z_.-]+$/.test(value) && entropy(value) >= GENERIC_ENTROPY;
}

/** A 40-character AWS secret access key: base64 with both cases and a digit or `/`/`+` (a hex SHA has one case). */
const AWS_SECRET_VALUE = /(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;
function awsSecretShaped(v: string): boolean {
	return /[A-Z]/.test(v) && /[a-z]/.test(v) && /[0-9/+]/.test(v) && !/EXAMPLE/.test(v);
}
/** "aws … secret" before a value: `aws_secret_access_key = …`, "the AWS secret access key is …". */
const AWS_NAMED = /\baws[\w .:="'-]{0,40}?secret[\w .:="'-]{0,40}?(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi;
/** Characters around an access key id searched for its secret. */
const AWS_NEAR = 120;

/**
 * What each case-insensitive class needs in the text (the first is `ASSIGNED`'s keywords, then
 * `AUTHORIZATION`, `BEARER`, `AWS_NAMED`).
 */
const WORDS: ReadonlyArray<readonly string[]> = [["pass", "secret", "token", "key", "cred", "auth"], ["authorization"], ["bearer"], ["aws"]];

/**
 * What each rule of secretlint's preset needs in the text (by rule id, without
 * `@secretlint/secretlint-rule-`): literal text every match of the rule holds, read from the
 * rule's patterns under the options the check runs it with (issue 37). A rule whose hints are
 * absent is not registered for the text: the preset's cost is per rule (~2 µs each set up and
 * run, ~60 µs for all of them), and prose holds no hint of most. The table was read from the
 * preset's version `PRESET_RULES_VERSION`: with any other version installed (the dependency is a
 * range) every rule runs on every text, so no family an update adds is skipped; a rule not named
 * here always runs. tests/security/credential-gate.test.ts holds the table against the preset.
 */
export const PRESET_RULES_VERSION = "13.0.7";

const PRESET_RULES: ReadonlyArray<{ rule: string } & HintGroup> = [
	// Its default options: the secret access key by its name only (key ids are our own pattern's).
	{ rule: "aws", hints: ["secret"], caseless: true },
	// Reads `.json` and `.p12` files only (the check's text is `.txt`); a key file's field names kept in case.
	{ rule: "gcp", hints: ["private_key"] },
	{ rule: "privatekey", hints: ["PRIVATE KEY"] },
	{ rule: "npm", hints: ["npm_", "_authToken", "x-oauth-basic"] },
	// A user and password before `@` in a URL; the database URLs report only those too.
	{ rule: "basicauth", hints: ["@"] },
	{ rule: "database-connection-string", hints: ["mongodb", "mysql", "postgres"], caseless: true },
	{ rule: "slack", hints: ["xox", "xapp", "hooks.slack.com"], caseless: true },
	{ rule: "sendgrid", hints: ["SG."] },
	{ rule: "shopify", hints: ["shppa_", "shpca_", "shpat_", "shpss_"] },
	{ rule: "stripe", hints: ["k_live_", "k_test_"] },
	{ rule: "github", hints: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"] },
	{ rule: "gitlab", hints: ["glpat-"] },
	{ rule: "grafana", hints: ["glc_", "glsa_"] },
	{ rule: "openai", hints: ["T3BlbkFJ"] },
	{ rule: "anthropic", hints: ["sk-ant-api0"] },
	{ rule: "groq", hints: ["gsk_"] },
	{ rule: "huggingface", hints: ["hf_"] },
	{ rule: "linear", hints: ["lin_api_"] },
	{ rule: "notion", hints: ["ntn_"] },
	{ rule: "1password", hints: ["ops_ey"] },
	{ rule: "hashicorp-vault", hints: ["hvs.", "hvb.", "hvr."] },
	{ rule: "vercel", hints: ["vcp_", "vci_", "vca_", "vcr_", "vck_"] },
	{ rule: "databricks", hints: ["dapi"] },
	{ rule: "docker", hints: ["dckr_pat_"] },
	{ rule: "figma", hints: ["figd_"] },
	{ rule: "cloudflare", hints: ["cfk_", "cfut_", "cfat_"] },
	{ rule: "tailscale", hints: ["tskey-"] },
	// `secretlint-disable` comments; the check defuses the word before the preset reads the text.
	{ rule: "filter-comments", hints: ["secretlint"], caseless: true },
];

/** The preset's rules the table gates (the others always run). */
export const GATED_PRESET_RULES: ReadonlySet<string> = new Set(PRESET_RULES.map((r) => r.rule));

const WORD = PROVIDER_TOKENS.length;
const PRESET = WORD + WORDS.length;
const SECRETLINT = PRESET + PRESET_RULES.length;
const SCANNER = new HintScanner([
	...PROVIDER_TOKENS.map((p) => ({ hints: p.hints })),
	...WORDS.map((hints) => ({ hints, caseless: true })),
	...PRESET_RULES,
	{ hints: ["secretlint"], caseless: true },
]);

/** What the joined fields hold that the check must look at further (one pass, `scan.ts`). */
export interface FieldScan {
	found: Uint8Array;
	/** The gated rules of secretlint's preset that could match (`PRESET_RULES`), in the table's order. */
	presetRules: string[];
	/** The text says `secretlint` (its disable comments are defused before the preset reads it). */
	secretlint: boolean;
}

export function scanFields(text: string): FieldScan {
	const found = SCANNER.scan(text);
	const presetRules: string[] = [];
	for (let i = 0; i < PRESET_RULES.length; i++) if (found[PRESET + i] === 1) presetRules.push((PRESET_RULES[i] as (typeof PRESET_RULES)[number]).rule);
	return { found, presetRules, secretlint: found[SECRETLINT] === 1 };
}

/** Every finding of State Flow's own classes in `text` (the joined fields, `credentials.ts`). */
export function ownFindings(text: string, { found }: FieldScan = scanFields(text)): RawFinding[] {
	const out: RawFinding[] = [];
	// Indexed: most texts open no group, and an iterator over every entry would cost more than the check.
	for (let i = 0; i < PROVIDER_TOKENS.length; i++) {
		if (found[i] !== 1) continue;
		const { kind, re } = PROVIDER_TOKENS[i] as (typeof PROVIDER_TOKENS)[number];
		re.lastIndex = 0;
		for (let m = re.exec(text); m !== null; m = re.exec(text)) {
			// A secret beside AWS's documented example id is still a secret (the example's own secret says EXAMPLE).
			if (kind === "an AWS access key") awsNear(text, m.index, m.index + m[0].length, out);
			if (m[0] === AWS_EXAMPLE_ID) continue;
			out.push({ pos: m.index, end: m.index + m[0].length, kind });
		}
	}
	if (found[WORD] === 1) assigned(text, out);
	if (found[WORD + 1] === 1) authorization(text, out);
	if (found[WORD + 2] === 1) bearer(text, out);
	if (found[WORD + 3] === 1) awsNamed(text, out);
	return out;
}

/** Secret-named assignments (`ASSIGNED`): a password at any shape, a key or token when it reads as random. */
function assigned(text: string, out: RawFinding[]): void {
	ASSIGNED.lastIndex = 0;
	for (let m = ASSIGNED.exec(text); m !== null; m = ASSIGNED.exec(text)) {
		const [word, rest, , value] = [m[1] as string, m[2] as string, m[3], m[4] as string];
		if (isReference(value) || NOT_SECRET_NAME.test(rest)) continue;
		const password = PASSWORD_WORD.test(word) && rest === "";
		// A password is a secret at any shape; a token or key only when it reads as random (not a word, not a version).
		if (!password && !random(value)) continue;
		out.push({ pos: m.index, end: m.index + m[0].length, kind: assignedKind(word), generic: true });
	}
}

function authorization(text: string, out: RawFinding[]): void {
	AUTHORIZATION.lastIndex = 0;
	for (let m = AUTHORIZATION.exec(text); m !== null; m = AUTHORIZATION.exec(text)) {
		// With its scheme the value is a credential whatever it looks like; bare, only when it reads as random.
		const value = m[2] as string;
		if (isReference(value) || (m[1] === undefined && !random(value))) continue;
		out.push({ pos: m.index, end: m.index + m[0].length, kind: "an Authorization header's credential", generic: true });
	}
}

function bearer(text: string, out: RawFinding[]): void {
	BEARER.lastIndex = 0;
	for (let m = BEARER.exec(text); m !== null; m = BEARER.exec(text)) {
		if (!isReference(m[1] as string) && random(m[1] as string)) out.push({ pos: m.index, end: m.index + m[0].length, kind: "a bearer token", generic: true });
	}
}

function awsNamed(text: string, out: RawFinding[]): void {
	AWS_NAMED.lastIndex = 0;
	for (let m = AWS_NAMED.exec(text); m !== null; m = AWS_NAMED.exec(text)) {
		if (awsSecretShaped(m[1] as string)) out.push({ pos: m.index, end: m.index + m[0].length, kind: "an AWS secret access key" });
	}
}

/** A 40-character secret within `AWS_NEAR` characters of an access key id is its secret access key. */
function awsNear(text: string, start: number, end: number, out: RawFinding[]): void {
	const from = Math.max(0, start - AWS_NEAR);
	const window = text.slice(from, Math.min(text.length, end + AWS_NEAR));
	AWS_SECRET_VALUE.lastIndex = 0;
	for (let m = AWS_SECRET_VALUE.exec(window); m !== null; m = AWS_SECRET_VALUE.exec(window)) {
		if (awsSecretShaped(m[0])) out.push({ pos: from + m.index, end: from + m.index + 40, kind: "an AWS secret access key" });
	}
}
