/**
 * The corpus of issue 33's credential classes and of the ordinary technical text that must still
 * store. Built when the tests run from a fixed seed (none is spelled in the source, so no secret
 * scanner flags this repository); each positive is the shape its issuer uses today, with a body
 * no service ever issued.
 */
import { createHash, randomUUID } from "node:crypto";

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const ALNUM = `${UPPER}${LOWER}${DIGITS}`;
const HEX = "0123456789abcdef";
const URLSAFE = `${ALNUM}_-`;

/** A deterministic string of `n` characters of `alphabet` (seeded by `seed`). */
export function chars(seed: string, n: number, alphabet = ALNUM): string {
	let out = "";
	for (let i = 0; out.length < n; i++) {
		for (const byte of createHash("sha256").update(`33:${seed}:${i}`).digest()) {
			if (out.length < n) out += alphabet[byte % alphabet.length];
		}
	}
	return out;
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

/** A JWT as issuers write it: base64url header and payload, and a signature (empty for `alg: none`). */
function jwt(seed: string, signed = true): string {
	const header = b64url({ alg: signed ? "HS256" : "none", typ: "JWT" });
	const payload = b64url({ sub: chars(`${seed}-sub`, 12, DIGITS), name: "Jane Roe", iat: 1_760_000_000, exp: 1_760_003_600 });
	return `${header}.${payload}.${signed ? chars(`${seed}-sig`, 43, URLSAFE) : ""}`;
}

/** Credentials issue 33 names (and the rest of gitleaks' families the check knows), each in a sentence or an assignment. */
export function corpusPositives(): Record<string, string> {
	const awsSecret = `${chars("aws-s1", 18)}/${chars("aws-s2", 13)}+${chars("aws-s3", 7)}`;
	return {
		JWT: `the session cookie held ${jwt("j1")}`,
		"JWT without a signature (alg none)": `token ${jwt("j2", false)} was accepted`,
		"JWT (jwt.io's example)":
			"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
		"bearer header": `Authorization: Bearer ${chars("bearer1", 40, `${ALNUM}._-`)}`,
		"bearer in a curl command": `curl -H "Authorization: Bearer ${chars("bearer2", 32)}" https://api.example.test/v1/me`,
		"bearer in prose": `call it with bearer ${chars("bearer3", 36)} from staging`,
		"Basic credentials header": `Authorization: Basic ${Buffer.from(`deploy:${chars("basic", 12)}`).toString("base64")}`,
		"AWS secret next to the words AWS secret": `AWS secret: ${awsSecret}`,
		"AWS secret access key in prose": `the AWS secret access key is ${awsSecret} (rotate monthly)`,
		"AWS secret in an ini file": `[default]\naws_secret_access_key = ${awsSecret}`,
		"AWS secret next to an access key id (AWS's example id)": `AKIAIOSFODNN7EXAMPLE / ${awsSecret}`,
		"OpenAI project key (sk-proj-)": `sk-proj-${chars("oa-p", 64, URLSAFE)}`,
		"OpenAI service-account key (sk-svcacct-)": `sk-svcacct-${chars("oa-s", 64, URLSAFE)}`,
		"OpenAI admin key (sk-admin-)": `sk-admin-${chars("oa-a", 64, URLSAFE)}`,
		"OPENAI_API_KEY of an older shape": `OPENAI_API_KEY=sk-${chars("oa-old", 48)}`,
		"Anthropic key, any length": `sk-ant-api03-${chars("an1", 64, URLSAFE)}`,
		"Anthropic admin key": `sk-ant-admin01-${chars("an2", 93, URLSAFE)}AA`,
		"Stripe live secret key": `sk_live_${chars("st1", 24)}`,
		"Stripe live restricted key": `rk_live_${chars("st2", 24)}`,
		"Stripe webhook secret": `whsec_${chars("st3", 32)}`,
		"Google API key": `AIza${chars("gg1", 35, URLSAFE)}`,
		"Google OAuth client secret": `GOCSPX-${chars("gg2", 28, URLSAFE)}`,
		"npm token": `npm_${chars("npm1", 36)}`,
		"GitLab personal token": `glpat-${chars("gl1", 20, URLSAFE)}`,
		"GitLab pipeline trigger token": `glptt-${chars("gl2", 40, HEX)}`,
		"GitLab deploy token": `gldt-${chars("gl3", 20, URLSAFE)}`,
		"Hugging Face token": `hf_${chars("hf1", 34, `${UPPER}${LOWER}`)}`,
		"GitHub token of a longer shape": `ghp_${chars("gh1", 40)}`,
		"Groq key": `gsk_${chars("groq", 52)}`,
		"xAI key": `xai-${chars("xai", 80)}`,
		"Perplexity key": `pplx-${chars("pplx", 48)}`,
		"Replicate token": `r8_${chars("r8", 37)}`,
		"HashiCorp Vault token": `hvs.${chars("hv", 90, URLSAFE)}`,
		"DigitalOcean token": `dop_v1_${chars("do", 64, HEX)}`,
		"PyPI token": `pypi-AgEIcHlwaS5vcmc${chars("pypi", 70, URLSAFE)}`,
		"Postman key": `PMAK-${chars("pm1", 24, HEX)}-${chars("pm2", 34, HEX)}`,
		"Sentry token": `sntrys_${chars("sentry", 60)}`,
		"Heroku key": `HRKU-${chars("heroku", 60, URLSAFE)}`,
		"Supabase token": `sbp_${chars("supa", 40, HEX)}`,
		"PlanetScale token": `pscale_tkn_${chars("ps", 43)}`,
		"Atlassian token": `ATATT3${chars("atl", 186, URLSAFE)}`,
		"Netlify token": `nfp_${chars("nfp", 40)}`,
		"Fly.io token": `fo1_${chars("fly", 43, URLSAFE)}`,
		"Telegram bot token": `${chars("tg1", 10, DIGITS)}:AA${chars("tg2", 33, URLSAFE)}`,
		"Twilio key": `SK${chars("tw", 32, HEX)}`,
		"age secret key": `AGE-SECRET-KEY-1${chars("age", 58, `${UPPER}${DIGITS}`)}`,
		"a service's API key in an env file": `MY_SERVICE_API_KEY=${chars("gen1", 32)}`,
		"a hex API key in JSON": `{"api_key": "${chars("gen2", 32, HEX)}"}`,
		"a 40-hex GITHUB_TOKEN": `GITHUB_TOKEN=${chars("gen3", 40, HEX)}`,
		"a Rails secret key base": `SECRET_KEY_BASE=${chars("gen4", 128, HEX)}`,
		"an x-api-key header": `x-api-key: ${chars("gen5", 40)}`,
		"an access token in YAML": `access_token: ${chars("gen6", 30, URLSAFE)}`,
		"an auth token assignment": `auth_token = "${chars("gen7", 24)}"`,
		"a password assignment": `password=${chars("pw1", 10)}`,
	};
}

/** Ordinary technical text that must store: hashes, ids, versions, encoded plain text, prose about secrets. */
export function corpusNegatives(): Record<string, string> {
	const sha1 = createHash("sha1").update("a").digest("hex");
	const sha256 = createHash("sha256").update("a").digest("hex");
	const uuid = randomUUID();
	return {
		"a git SHA in prose": `fixed in ${sha1}, see the revert in ${sha1.slice(0, 12)}`,
		"a git SHA assigned": `commit: ${sha1}`,
		"a SHA-256 digest": `sha256: ${sha256}`,
		"an SRI integrity value": `integrity: sha512-${createHash("sha512").update("a").digest("base64")}`,
		"a file hash in a lockfile line": `"resolved": "https://registry.npmjs.org/x/-/x-1.0.0.tgz", "shasum": "${sha1}"`,
		"a UUID id": `id: ${uuid}`,
		"a request id": `request_id=${uuid}`,
		"UUIDs in prose": `jobs ${randomUUID()} and ${randomUUID()} failed`,
		"base64 of plain text": Buffer.from("The quick brown fox jumps over the lazy dog, twice. ".repeat(8)).toString("base64"),
		"base64 of JSON config": `content: ${Buffer.from(JSON.stringify({ retries: 3, region: "eu-west-1" })).toString("base64")}`,
		"version strings": "node v20.11.1, typescript 5.4.5, version: 1.2.3-beta.4, api_version=2024-06-01",
		"a token's metadata": "token_type: bearer, token_url: https://auth.example.test/oauth/token, expires_in: 3600",
		"a key's id and name": `key_id: ${chars("kid", 20, `${UPPER}${DIGITS}`)}, secret_name: prod/db/password`,
		"a token count": "max_tokens: 4096, tokens_used: 1234",
		"a tokenizer setting": "tokenizer: cl100k_base-v2024",
		"a source file about tokens": "src/auth/token-refresh.ts: refresh the token 60 s before it expires",
		"keys of a keyboard": "keyboard: ctrl+shift+p opens the palette",
		"a public key id": `public_key: ${chars("pub", 20, `${UPPER}${DIGITS}`)}`,
		"a password policy": "password: at least 12 characters, rotated yearly",
		"a secret manager reference": "secret: arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db",
		"AWS secret named, not given": "AWS secret: the env var AWS_SECRET_ACCESS_KEY; DB: 1Password item Prod DB",
		"AWS's documented example pair": "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"a bearer in prose": "Bearer tokens are sent in the Authorization header",
		"an Authorization header placeholder": "Authorization: Bearer $TOKEN",
		"an API key placeholder": "OPENAI_API_KEY=your-api-key-here",
		"an API key from the environment": "api_key = os.environ['OPENAI_API_KEY']",
		"a task list": "sk-1 is done; the ask-bot ran",
		"long English prose":
			"We moved the deploy to Fridays because the Monday window clashed with the database maintenance that the platform team runs every week. ".repeat(30),
		"a Go module hash": `h1:${createHash("sha256").update("m").digest("base64")}`,
		"a Docker image digest": `image: ghcr.io/acme/api@sha256:${sha256}`,
	};
}
