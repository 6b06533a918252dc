// The model and tools are the CLI's: the same offline scripted model when no key is set, the same
// provider choice from the environment when one is, and the same read-only workspace tools (not
// the CLI's write_file, edit_file and bash), so the page shows what `kode` shows. Imported from
// the CLI example's sources, not copied.
export { systemPrompt } from '../../cli/src/app.js'
export { type ConnectedModel, connectModel, resolveProvider } from '../../cli/src/provider.js'
export { readOnlyBuiltinTools } from '../../cli/src/tools/index.js'
export { openWorkspace } from '../../cli/src/tools/workspace.js'
