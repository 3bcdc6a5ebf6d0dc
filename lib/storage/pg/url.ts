/**
 * The one place that turns a database URL into something safe to show. The password (in the
 * userinfo or as a `password` query parameter) never reaches a message, a log, `/state` or an
 * error: messages show `redactUrl(url)`, and any text that may echo the URL or a driver
 * message goes through `scrubber(url)` first.
 */

/** The URL without its password, e.g. `postgres://app@db.example.com:5432/memory?sslmode=require`. */
export function redactUrl(url: string): string {
	let u: URL;
	try {
		u = new URL(url);
	} catch {
		return "(a database URL that does not parse as postgres://user:password@host:port/database)";
	}
	u.password = "";
	for (const key of [...u.searchParams.keys()]) if (/^(password|sslpassword)$/i.test(key)) u.searchParams.set(key, "***");
	return u.toString();
}

/** Every spelling of the secrets a URL carries (raw and percent-decoded). */
function secretsOf(url: string): string[] {
	const out = new Set<string>();
	const add = (s: string): void => {
		if (s === "") return;
		out.add(s);
		try {
			out.add(decodeURIComponent(s));
		} catch {
			// Not percent-encoded text: the raw spelling is enough.
		}
	};
	try {
		const u = new URL(url);
		add(u.password);
		for (const [key, value] of u.searchParams) if (/^(password|sslpassword)$/i.test(key)) add(value);
	} catch {
		// An unparseable URL: hide the whole of it wherever it is echoed.
		add(url);
	}
	// Longest first, so a secret that contains another is hidden whole.
	return [...out].sort((a, b) => b.length - a.length);
}

/** A function that removes the URL's secrets from any text (driver messages included). */
export function scrubber(url: string): (text: string) => string {
	const secrets = secretsOf(url);
	return (text) => {
		let out = text;
		for (const s of secrets) out = out.split(s).join("***");
		return out;
	};
}
