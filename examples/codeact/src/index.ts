/**
 * Example: a CodeAct agent. `createCodeTool` runs each code block the model writes as a separate,
 * limited subprocess; `runScriptedCodeAct` shows a whole run against a scripted local model.
 */
export { type CodeToolOptions, createCodeTool } from './code-tool.js'
export { DEFAULT_INTERPRETERS, type Interpreter, nodeInterpreter, pythonInterpreter } from './interpreters.js'
export { runInSandbox, type SandboxLimits, type SandboxResult } from './sandbox.js'
export { BUGGY_PROGRAM, FIXED_PROGRAM, SCRIPTED_TASK, scriptedCodeActModel } from './scripted-model.js'
export { runScriptedCodeAct, type ScriptedRun } from './scripted-run.js'
