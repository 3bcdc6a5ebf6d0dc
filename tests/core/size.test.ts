/**
 * Sizes as State Flow counts them (core/size.ts): UTF-8 bytes of text, counted by a loop for
 * short strings and natively for long ones, equal to the bytes Node would encode (a lone
 * surrogate counts as the 3 bytes of its replacement character), and a size in words.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { assertProperty } from "../helpers/seed.js";
import { formatSize, jsonTextBytes, utf8Bytes } from "../../lib/core/size.js";

const encoded = (s: string) => Buffer.byteLength(s, "utf8");

describe("utf8Bytes", () => {
	it("counts 1, 2, 3 and 4 bytes at each boundary, and 3 for a lone surrogate", () => {
		for (const [s, n] of [
			["", 0],
			["\u007f", 1],
			["\u0080", 2],
			["\u07ff", 2],
			["\u0800", 3],
			["\ud7ff", 3],
			["\ud800", 3],
			["\udbff", 3],
			["\udc00", 3],
			["\udfff", 3],
			["\ue000", 3],
			["\uffff", 3],
			["\ud800\udc00", 4],
			["\udbff\udfff", 4],
			["\ud800a", 4],
			["\ud800\ud800", 6],
			["\ud800\ue000", 6],
			["\udbff\uffff", 6],
			["\udc00\ud800", 6],
			["a\ud83d\ude00b", 6],
		] as const) {
			assert.equal(utf8Bytes(s), n, JSON.stringify(s));
			assert.equal(utf8Bytes(s), encoded(s), JSON.stringify(s));
		}
	});

	it("equals the bytes Node encodes, for short and long strings of any code units", () => {
		const unit = fc.oneof(
			fc.constantFrom("a", "\u00e9", "\u20ac", "\ud83d", "\ude00", "\ud83d\ude00", "\u0800", "\u07ff", "\udbff", "\udc00"),
			fc.string({ unit: "binary", maxLength: 4 }),
		);
		assertProperty(
			fc.property(fc.array(unit, { maxLength: 120 }), fc.nat(300), (parts, pad) => {
				const s = parts.join("");
				assert.equal(utf8Bytes(s), encoded(s));
				// Around the length where the native counter takes over.
				const long = "x".repeat(pad) + s;
				assert.equal(utf8Bytes(long), encoded(long));
			}),
		);
	});

	it("jsonTextBytes: the UTF-8 bytes of a value's JSON text, 0 for what JSON cannot spell", () => {
		assert.equal(jsonTextBytes({ a: "\u20ac" }), encoded('{"a":"\u20ac"}'));
		assert.equal(jsonTextBytes(undefined), 0);
		assert.equal(
			jsonTextBytes(() => 1),
			0,
		);
	});
});

describe("formatSize", () => {
	it("bytes below 1 KB, KB with one decimal below 1 MB, MB above", () => {
		assert.equal(formatSize(0), "0 B");
		assert.equal(formatSize(1023), "1023 B");
		assert.equal(formatSize(1024), "1.0 KB");
		assert.equal(formatSize(1229), "1.2 KB");
		assert.equal(formatSize(1024 * 1024 - 1), "1024.0 KB");
		assert.equal(formatSize(1024 * 1024), "1.0 MB");
		assert.equal(formatSize(3.4 * 1024 * 1024), "3.4 MB");
	});
});
