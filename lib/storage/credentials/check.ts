/**
 * Credentials are not stored (issue 24): memory reaches every later head, every export and, for
 * a linked project, every teammate, so a patch whose strings look like a credential is refused
 * before anything is locked, naming the field and saying to keep a reference to where the
 * secret lives. The patterns are secretlint's maintained recommended preset, plus the classes
 * it leaves out or knows only in one exact shape (`credential-patterns.ts`: provider prefixes,
 * JWTs, bearer values, AWS secrets by their context, secret-named assignments by their entropy).
 * Only what a patch writes is checked (its keys and string values), never the stored state: the
 * check costs what the patch costs. The user lets a false positive through with `allowSecrets`
 * in their config, or for one command with `--allow-secret` (`CommitOptions.allowSecret`).
 */
import { createRequire } from "node:module";
import { lintSource } from "@secretlint/core";
import { secretLintProfiler } from "@secretlint/profiler";
import { rules as presetRules } from "@secretlint/secretlint-rule-preset-recommend";
import { elideMiddle } from "../../core/elide.js";
import { fail, formatPath } from "../../core/errors.js";
import { ROOTS } from "../../core/types.js";
import { type FieldScan, GATED_PRESET_RULES, PRESET_RULES_VERSION, ownFindings, type RawFinding, scanFields } from "./patterns.js";

/** One credential found: where in the patch, what it looks like, and where in that field's text. */
export interface CredentialFinding {
	path: readonly (string | number)[];
	kind: string;
	/** Offsets in the field's text (`key: value`), for the allow list. */
	start: number;
	end: number;
	/** The finding lies within the member's key: the refusal names the object holding it (the key is never printed). */
	inKey: boolean;
}

// secretlint profiles every run by default: a performance mark per rule per text, kept forever
// (a pi session commits for hours) and half of a small text's check. Nothing here reads them.
secretLintProfiler.setEnabled(false);

type Config = Parameters<typeof lintSource>[0]["options"]["config"];
type PresetRule = (typeof presetRules)[number];

const RULE_PREFIX = "@secretlint/secretlint-rule-";
const RULES = new Map<string, PresetRule>(presetRules.map((rule) => [rule.meta.id.slice(RULE_PREFIX.length), rule]));
const INSTALLED = (createRequire(import.meta.url)("@secretlint/secretlint-rule-preset-recommend/package.json") as { version: string }).version;

/**
 * Rules of the preset that run on every text: those the hint table does not name, or all of
 * them when the installed preset is not the version the table was read from (`PRESET_RULES`).
 */
export function ungatedRules(installed: string): string[] {
	return [...RULES.keys()].filter((id) => installed !== PRESET_RULES_VERSION || !GATED_PRESET_RULES.has(id));
}
const UNGATED = ungatedRules(INSTALLED);
const GATED = INSTALLED === PRESET_RULES_VERSION;

/**
 * The preset's rules that may match a text, each registered as the preset registers it (its
 * default options: AWS access key ids are matched by our own pattern instead of the preset's
 * `enableIDScanRule`, which also runs an account-id scan, no secret, costing a third of a large
 * patch's check). Empty when none may. Configs are kept by the rules they hold: few sets occur.
 */
const configs = new Map<string, Config>();
function presetConfig(ids: readonly string[]): Config | undefined {
	if (ids.length === 0) return undefined;
	const key = ids.join(",");
	let config = configs.get(key);
	if (config === undefined) {
		const rules = ids.flatMap((id) => {
			const rule = RULES.get(id);
			return rule === undefined ? [] : [{ id: rule.meta.id, rule }];
		});
		config = { rules };
		// Bounded: at most one config per subset the texts open, and prose opens few; a flood of odd texts only costs the cache.
		if (configs.size >= 256) configs.clear();
		configs.set(key, config);
	}
	return config;
}

/** The rules of secretlint's preset the check runs on a scanned text (ids without the prefix): the gated ones it may match and every ungated one. */
function rulesOf(scan: FieldScan): readonly string[] {
	return GATED ? [...scan.presetRules, ...UNGATED] : UNGATED;
}

/** `rulesOf` a text, as `findCredentials` chooses them (tests/security/credential-gate.test.ts holds it to the whole preset). */
export function presetRulesFor(text: string): readonly string[] {
	return rulesOf(scanFields(text));
}

/** What each preset rule finds, in the refusal's words (a rule not named here is called by its id). */
const KINDS: Record<string, string> = {
	privatekey: "a private key",
	aws: "an AWS access key or secret",
	gcp: "a Google Cloud credential",
	github: "a GitHub token",
	gitlab: "a GitLab token",
	slack: "a Slack token or webhook",
	openai: "an OpenAI API key",
	anthropic: "an Anthropic API key",
	npm: "an npm token",
	basicauth: "a password inside a URL",
	"database-connection-string": "a database URL with its password",
	sendgrid: "a SendGrid API key",
	stripe: "a Stripe key",
	shopify: "a Shopify token",
	"1password": "a 1Password secret key or token",
	cloudflare: "a Cloudflare token",
	databricks: "a Databricks token",
	docker: "a Docker Hub token",
	figma: "a Figma token",
	grafana: "a Grafana token",
	groq: "a Groq API key",
	"hashicorp-vault": "a HashiCorp Vault token",
	huggingface: "a Hugging Face token",
	linear: "a Linear API key",
	notion: "a Notion token",
	tailscale: "a Tailscale key",
	vercel: "a Vercel token",
};

/** One string the patch writes, placed in the text linted. */
interface Field {
	path: readonly (string | number)[];
	start: number;
	end: number;
	/** Characters of the text that are the member's key (0 for an array item). */
	keyLength: number;
}

/**
 * Fields are joined with a NUL line between them, which no pattern reads across (a PEM body or
 * an assignment stops at it), so a finding belongs to one field. A string value is written as
 * `key: value`, so an assignment split into a key and its value (`{ "password": "…" }`) reads as one.
 */
const SEPARATOR = "\n\u0000\n";

function gather(patch: unknown): { text: string; fields: Field[] } {
	// Pieces are pushed as they are and joined once: a 2 MB patch builds no intermediate strings.
	const parts: string[] = [];
	const fields: Field[] = [];
	let at = 0;
	const add = (path: readonly (string | number)[], key: string, value: string | undefined, keyLength: number) => {
		let length = key.length;
		if (value !== undefined) length = key === "" ? value.length : length + 2 + value.length;
		if (key !== "") parts.push(key);
		if (value !== undefined) {
			if (key !== "") parts.push(": ");
			parts.push(value);
		}
		parts.push(SEPARATOR);
		fields.push({ path, start: at, end: at + length, keyLength });
		at += length + SEPARATOR.length;
	};
	const seen = new Set<object>();
	const walk = (value: unknown, path: (string | number)[], key: string) => {
		if (typeof value === "string") add(path, key, value, typeof path.at(-1) === "string" ? key.length : 0);
		else if (value !== null && typeof value === "object" && !seen.has(value)) {
			seen.add(value);
			if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...path, i], key));
			else {
				for (const k of Object.keys(value)) {
					const v = (value as Record<string, unknown>)[k];
					if (typeof v !== "string") add([...path, k], k, undefined, k.length);
					walk(v, [...path, k], k);
				}
			}
		}
	};
	walk(patch, [], "");
	return { text: parts.join(""), fields };
}

/** The field a position of the joined text belongs to (binary search; fields are in order). */
function fieldAt(fields: readonly Field[], pos: number): Field | undefined {
	let lo = 0;
	let hi = fields.length - 1;
	while (lo <= hi) {
		const mid = (lo + hi) >> 1;
		const f = fields[mid] as Field;
		if (pos < f.start) hi = mid - 1;
		else if (pos >= f.end) lo = mid + 1;
		else return f;
	}
	return undefined;
}

/**
 * The user's allow list (`allowSecrets` in the config): an entry is an exact string, or
 * `/pattern/flags`; a finding is let through when an occurrence of an entry in the field's text
 * overlaps it. Compiled once per list.
 */
export type AllowList = readonly string[];

function allowMatchers(allow: AllowList): RegExp[] {
	return allow.map((entry) => {
		const re = /^\/(.+)\/([a-z]*)$/s.exec(entry);
		if (re) return new RegExp(re[1] as string, `${(re[2] as string).replace("g", "")}g`);
		return new RegExp(entry.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g");
	});
}

function allowed(text: string, start: number, end: number, matchers: readonly RegExp[]): boolean {
	for (const re of matchers) {
		re.lastIndex = 0;
		for (let m = re.exec(text); m !== null; m = re.exec(text)) {
			if (m.index < end && m.index + m[0].length > start) return true;
			if (m[0].length === 0) re.lastIndex++;
		}
	}
	return false;
}

/** Every credential the strings of `patch` hold, in the order of the patch (allowed ones left out). */
export async function findCredentials(patch: unknown, allow: AllowList = []): Promise<CredentialFinding[]> {
	const { text, fields } = gather(patch);
	if (text === "") return [];
	// One pass says what the text may hold; the patterns that cannot match are not run.
	const scan = scanFields(text);
	// A field saying `secretlint-disable` must not switch the check off for the fields after it.
	const content = scan.secretlint ? text.replace(/secretlint/gi, (s) => `${s[0]}_${s.slice(2)}`) : text;
	const raw: RawFinding[] = [];
	const config = presetConfig(rulesOf(scan));
	if (config !== undefined) {
		const linted = await lintSource({
			source: { content, filePath: "state.txt", ext: ".txt", contentType: "text" },
			options: { config, noPhysicFilePath: true, maskSecrets: true },
		});
		for (const m of linted.messages) {
			const rule = m.ruleId.startsWith(RULE_PREFIX) ? m.ruleId.slice(RULE_PREFIX.length) : m.ruleId;
			raw.push({ pos: m.range[0], end: m.range[1], kind: KINDS[rule] ?? `a credential (${rule})` });
		}
	}
	// The defused word only removes hints: the scan of `text` is a safe one for `content`.
	raw.push(...ownFindings(content, scan));
	const matchers = allowMatchers(allow);
	const out: CredentialFinding[] = [];
	let lastGeneric = false;
	for (const r of raw.sort((a, b) => a.pos - b.pos)) {
		const f = fieldAt(fields, r.pos);
		if (f === undefined) continue;
		const own = text.slice(f.start, f.end);
		const start = r.pos - f.start;
		const end = Math.min(r.end, f.end) - f.start;
		if (matchers.length > 0 && allowed(own, start, end, matchers)) continue;
		// The preset and our own patterns (an assignment and the token it assigns) may find one
		// credential twice: it is one finding, called by its shape where one pattern knows it.
		const last = out.at(-1);
		if (last !== undefined && last.path === f.path && start < last.end) {
			if (lastGeneric && r.generic !== true) last.kind = r.kind;
			lastGeneric &&= r.generic === true;
			last.end = Math.max(last.end, end);
			last.inKey = last.end <= f.keyLength;
			continue;
		}
		out.push({ path: f.path, kind: r.kind, start, end, inKey: end <= f.keyLength });
		lastGeneric = r.generic === true;
	}
	return out;
}

/** Columns of a refusal's lines: the CLI prints it after `state-flow: ` (12 columns) within 80. */
const REFUSAL_WIDTH = 68;

/** Phrases (each shorter than `width`) joined into lines of at most `width` characters, in order. */
function fitPhrases(phrases: readonly string[], width: number): string[] {
	const out: string[] = [];
	for (const p of phrases) {
		const last = out.at(-1);
		if (last !== undefined && last.length + 1 + p.length <= width) out[out.length - 1] = `${last} ${p}`;
		else out.push(p);
	}
	return out;
}

/**
 * Refuse a patch that writes a credential (`credential`, naming the first field and what it
 * looks like; the value itself is never repeated). Runs before any lock is taken. The message
 * is lines of at most `REFUSAL_WIDTH` characters, the config file's path (which cannot be
 * broken) on a line of its own: where the secret belongs instead, and the two ways the user
 * stores it anyway — `--allow-secret` for one command, `allowSecrets` in `configFile` for good.
 */
export async function refuseCredentials(patch: unknown, allow: AllowList = [], configFile = "State Flow's config.json"): Promise<void> {
	const [first, ...more] = await findCredentials(patch, allow);
	if (first === undefined) return;
	const others = more.filter((f) => formatPath(f.path) !== formatPath(first.path)).length;
	const at = first.inKey ? first.path.slice(0, -1) : first.path;
	// A registered root is spelled `cwd.todos…`, as the model and the root's own refusals spell it.
	const path = at[1] === ROOTS ? [at[0] as string, ...at.slice(2)] : at;
	// A path of long keys shows its start and end (issue 33), so the refusal keeps its width.
	const where = `${first.inKey ? "a key of " : ""}\`${elideMiddle(formatPath(path), REFUSAL_WIDTH - 12)}\``;
	const lines = fitPhrases(
		[
			where,
			`holds what looks like ${first.kind}${others > 0 ? "," : ";"}`,
			...(others > 0 ? [`and ${others} more field${others === 1 ? " does" : "s do"} too;`] : []),
			"nothing was written.",
			"State is shown to the model on every request and exported,",
			"so it never keeps a secret: keep a reference to where the secret",
			'lives instead (e.g. "the env var AWS_SECRET_ACCESS_KEY",',
			'"1Password item Prod DB"). If it is no secret, the user can store',
			"it anyway: once with --allow-secret (`/state set … --allow-secret`,",
			"`state-flow set|import … --allow-secret`), or for good by listing it",
			"under `allowSecrets` in",
		],
		REFUSAL_WIDTH,
	);
	fail("credential", [...lines, configFile].join("\n"), path);
}
