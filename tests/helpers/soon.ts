/**
 * An event a test expects to arrive by itself (a file watch, a database notification): `arrive`
 * resolves `arrived`; if it has not come within `ms`, `arrived` rejects with `why`. A deadline,
 * not a wait: the test goes on the moment the event comes.
 */
export function expectSoon(why: string, ms = 10_000): { arrived: Promise<void>; arrive: () => void } {
	let arrive: () => void = () => {};
	const arrived = new Promise<void>((resolve, reject) => {
		const deadline = setTimeout(() => reject(new Error(why)), ms);
		arrive = () => {
			clearTimeout(deadline);
			resolve();
		};
	});
	return { arrived, arrive };
}
