// The extension entry pi loads (package.json `pi.extensions`). pi names an extension in its
// startup list after the folder of its entry file, so this folder makes it `state-flow`
// (the compiled code lives in dist/lib, which would show as `lib`).
export { createStateFlow, default } from "../../dist/lib/index.js";
