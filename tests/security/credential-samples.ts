/**
 * Credential-shaped test strings, built when the tests run (none is spelled in the source, so
 * no secret scanner flags this repository) from a fixed seed, so every run checks the same
 * strings. Each is the well-known format of its class, with a body no service ever issued.
 */
import { createHash, generateKeyPairSync } from "node:crypto";

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const ALNUM = `${UPPER}abcdefghijklmnopqrstuvwxyz0123456789`;

/** A deterministic string of `n` characters of `alphabet` (seeded by `seed`). */
function chars(seed: string, n: number, alphabet = ALNUM): string {
	let out = "";
	for (let i = 0; out.length < n; i++) {
		for (const byte of createHash("sha256").update(`${seed}:${i}`).digest()) {
			if (out.length < n) out += alphabet[byte % alphabet.length];
		}
	}
	return out;
}

const dash = (n: number) => "-".repeat(n);
const pem = (label: string, body: string) => `${dash(5)}BEGIN ${label}${dash(5)}\n${body}\n${dash(5)}END ${label}${dash(5)}\n`;

/** Private keys as `openssl`/`ssh-keygen` write them (real keys, made for the test). */
function privateKeys(): Record<string, string> {
	const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" }) as string;
	const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }) as string;
	const ed = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }) as string;
	const openssh = pem("OPENSSH PRIVATE KEY", `b3BlbnNzaC1rZXktdjEAAAAA${chars("ssh", 376, `${ALNUM}+/`)}`.match(/.{1,70}/g)?.join("\n") ?? "");
	return {
		"RSA private key block": rsa,
		"RSA private key, escaped newlines": `key = "${rsa.replace(/\n/g, "\\n")}"`,
		"EC private key block": ec,
		"Ed25519 private key block": ed,
		"OpenSSH private key block": openssh,
		"GCP service-account JSON": JSON.stringify({
			type: "service_account",
			project_id: "acme-prod",
			private_key_id: chars("gcp-id", 40, "0123456789abcdef"),
			private_key: ec,
			client_email: "deploy@acme-prod.iam.gserviceaccount.com",
		}),
	};
}

/** One sample per credential class issue 24 names (and a few more the preset knows). */
export function credentialSamples(): Record<string, string> {
	const b32 = `${UPPER}234567`;
	return {
		...privateKeys(),
		"AWS access key id": `AKIA${chars("aws-id", 16, b32)}`,
		"AWS access key id with its secret": `aws_access_key_id = AKIA${chars("aws-id2", 16, b32)}\naws_secret_access_key = ${chars("aws-secret", 40, `${ALNUM}/+`)}`,
		"AWS secret in an env assignment": `AWS_SECRET_ACCESS_KEY=${chars("aws-secret2", 40)}`,
		"Google API key": `AIza${chars("gcp-key", 35, `${ALNUM}_-`)}`,
		"Azure storage connection string": `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${chars("az-key", 86, `${ALNUM}+/`)}==;EndpointSuffix=core.windows.net`,
		"Azure SAS URL": `https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&se=2030-01-01T00:00:00Z&sig=${chars("az-sig", 43, ALNUM)}%3D`,
		"Azure client secret": `${chars("az-cs1", 3)}8Q~${chars("az-cs2", 34, `${ALNUM}_.-`)}`,
		"GitHub classic token": `ghp_${chars("ghp", 36)}`,
		"GitHub fine-grained token": `github_pat_${chars("ghpat1", 22)}_${chars("ghpat2", 59)}`,
		"GitLab token": `glpat-${chars("glpat", 20, `${ALNUM}_-`)}`,
		"Slack bot token": `xoxb-${chars("sl1", 11, "0123456789")}-${chars("sl2", 12, "0123456789")}-${chars("sl3", 24)}`,
		"Slack webhook": `https://hooks.slack.com/services/T${chars("wh1", 8, UPPER)}/B${chars("wh2", 8, UPPER)}/${chars("wh3", 24)}`,
		"OpenAI key": `sk-proj-${chars("oa1", 74, `${ALNUM}_-`)}T3BlbkFJ${chars("oa2", 73, `${ALNUM}_-`)}Q`,
		"Anthropic key": `sk-ant-api03-${chars("an", 93, `${ALNUM}_-`)}AA`,
		"npm token": `//registry.npmjs.org/:_authToken=npm_${chars("npm", 36)}`,
		"password= assignment": `password=${chars("pw", 6)}!x`,
		"password in JSON text": `{"db_password": "Zx9!${chars("pw2", 8)}"}`,
		"DB_PASSWORD env assignment": `DB_PASSWORD=${chars("pw3", 10)}9`,
		"client_secret assignment": `client_secret: "${chars("cs", 24)}"`,
		"database URL with its password": `postgres://app:${chars("pg", 12)}@db.internal:5432/app`,
	};
}

/** Ordinary text that must pass: hashes, ids, data, and prose about passwords and where secrets live. */
export function ordinarySamples(): Record<string, string> {
	return {
		"git commit hash": createHash("sha1").update("x").digest("hex"),
		UUID: "3f2b8c1e-9a4d-4e7f-b6c2-1d0e5a7f9b3c",
		"SHA-256 sum": `sha256:${createHash("sha256").update("x").digest("hex")}`,
		"base64 data": Buffer.from(chars("b64", 900)).toString("base64"),
		"the word password": "the password field is required",
		"where the secret lives": "set the password in the env var DB_PASSWORD",
		"a reference to a vault": "AWS secret: the env var AWS_SECRET_ACCESS_KEY; DB: 1Password item Prod DB",
		"password from the environment": "password = process.env.DB_PASSWORD",
		// biome-ignore lint/suspicious/noTemplateCurlyInString: a shell/template placeholder is the text under test.
		"password placeholder": 'password: "${DB_PASSWORD}"',
		"password variable": "password=$DB_PASSWORD",
		"password left empty": "password=",
		"password in prose": "password: stored in the team vault",
		"password kept in a file": "password: ~/.pgpass (or /run/secrets/db_password in the container)",
		"AWS's documented example id": "AKIAIOSFODNN7EXAMPLE",
		"public key block": pem("PUBLIC KEY", chars("pub", 64, `${ALNUM}+/`)),
		"private key placeholder": pem("PRIVATE KEY", "..."),
		"a URL without credentials": "https://github.com/acme/api/pull/42",
		"a postgres URL without a password": "postgres://localhost:5432/app",
	};
}
