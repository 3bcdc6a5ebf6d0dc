import assert from "node:assert/strict";

/** `items.at(index)`, failing the test (not returning undefined) when there is no such item. */
export function at<T>(items: ArrayLike<T> & { at(i: number): T | undefined }, index: number): T {
	const item = items.at(index);
	assert.ok(item !== undefined, `no item at ${index} of ${items.length}`);
	return item;
}
