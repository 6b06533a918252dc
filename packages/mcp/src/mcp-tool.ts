import {
  defineTool,
  type ParsedArguments,
  type Tool,
  type ToolContext,
  type ToolOutput,
  type ToolReturn,
} from '@kode/core'
import { Type } from '@sinclair/typebox'
import type { ToolApproval } from './approval.js'
import { messageOf } from './errors.js'
import { isRecord } from './is-record.js'
import type { McpToolInfo } from './options.js'
import { createOutputCheck } from './output-check.js'
import { repairSchema } from './schema-repair.js'
import { SCHEMA_VALIDATOR } from './schema-validator.js'
import { type CallResult, toToolOutput } from './tool-result.js'
import { inlineTopLevelRef } from './top-level-ref.js'

/** A tool as `tools/list` describes it (the fields we use). */
export interface ListedTool {
  name: string
  title?: string
  description?: string
  inputSchema: Record<string, unknown>
  outputSchema?: Record<string, unknown>
  annotations?: Record<string, unknown>
  execution?: { taskSupport?: string }
}

/** How a Kode tool reaches its server: one `tools/call`, and what to say when that fails. */
export interface ToolCaller {
  /** Sends `tools/call`; `signal` aborting sends `notifications/cancelled`. */
  call(
    name: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; onProgress: (message: string) => void },
  ): Promise<CallResult>
  /** The text of the `error` result for a call that failed (the server exited, ...). */
  describeFailure(error: unknown, toolName: string): string
  /** An `error` result the server answered with, as it may be kept (see `serverSecrets`). */
  safeError(output: ToolOutput): ToolOutput
}

/**
 * A server's tool as a Kode tool: its JSON Schema offered to the model as it is (but for what
 * providers would refuse, repaired: see `repairSchema`, `inlineTopLevelRef`) and checked with Ajv
 * (the validator the MCP SDK ships) before the call, `execute` sending `tools/call` and checking
 * the result against the tool's output schema, if it has one.
 */
export function toKodeTool(
  listed: ListedTool,
  info: McpToolInfo,
  caller: ToolCaller,
  options: { timeoutMs: number | undefined; needsApproval: ToolApproval },
): Tool {
  // The model is offered, and the arguments are checked against, the same repaired schema.
  const inputRepair = { uncheckable: false }
  const schema = repairSchema(objectSchema(listed.inputSchema), inputRepair)
  // Structured content is checked against its schema repaired the same way.
  const outputRepair = { uncheckable: false }
  const outputSchema = isRecord(listed.outputSchema)
    ? repairSchema(inlineTopLevelRef(listed.outputSchema), outputRepair)
    : undefined
  const checkOutput = createOutputCheck(listed.name, outputSchema, { matches: !outputRepair.uncheckable })
  const execute = async (args: Record<string, unknown>, ctx: ToolContext): Promise<ToolReturn> => {
    try {
      const result = await caller.call(listed.name, args, {
        signal: ctx.signal,
        onProgress: (message) => ctx.progress(message),
      })
      checkOutput(result)
      const output = toToolOutput(result)
      // The server's error may quote what it was given, as its JSON-RPC errors may (see
      // `describeFailure`); a successful result is its answer, and kept as it is.
      return output.status === 'error' ? caller.safeError(output) : output
    } catch (error) {
      // The SDK fails an aborted call at once with its own wrapper of the reason (having sent the
      // server notifications/cancelled, if the request went out), which would read as the
      // server's error: say what happened instead.
      if (ctx.signal.aborted) {
        return { status: 'error', outputText: `${info.name} was cancelled: ${messageOf(ctx.signal.reason)}` }
      }
      return { status: 'error', outputText: caller.describeFailure(error, info.name) }
    }
  }
  return defineTool({
    name: info.name,
    description: listed.description ?? listed.title ?? '',
    parameters: Type.Unsafe<Record<string, unknown>>(schema),
    validate: createValidator(schema, !inputRepair.uncheckable),
    execute,
    // The engine asks the user first (event tool_approval_request; agent.continue decides).
    needsApproval: options.needsApproval,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  })
}

/**
 * Tool arguments are an object. A schema that is one in all but its `type` (none, or a list naming
 * `object`) keeps what it says of them, typed `object` as providers require; a server that sends
 * no schema, or one of another type, gets an open object. One that is only a reference to its
 * own definitions is read as the definition it names.
 */
function objectSchema(sent: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!isRecord(sent)) return openObject()
  const schema = inlineTopLevelRef(sent)
  const { type } = schema
  if (type === 'object') return schema
  if (type === undefined || (Array.isArray(type) && type.includes('object')))
    return { ...schema, type: 'object' }
  return openObject()
}

/** A fresh one each time: a tool's schema is its own. */
function openObject(): Record<string, unknown> {
  return { type: 'object', properties: {} }
}

/**
 * Checks arguments against the server's schema, compiled on first use. A schema Ajv cannot
 * compile (a dialect it does not know), or one whose repair made it compile (`matches` false: see
 * `repairSchema`), only checks that the arguments are an object: the server still validates what
 * it receives.
 */
function createValidator(
  schema: Record<string, unknown>,
  matches: boolean,
): (args: unknown) => ParsedArguments<Record<string, unknown>> {
  let check: ((args: unknown) => ParsedArguments<Record<string, unknown>>) | undefined
  return (args) => {
    check ??= matches ? compile(schema) : objectOnly
    return check(args)
  }
}

function objectOnly(args: unknown): ParsedArguments<Record<string, unknown>> {
  return isRecord(args) ? { ok: true, args } : { ok: false, error: '/: must be an object' }
}

function compile(
  schema: Record<string, unknown>,
): (args: unknown) => ParsedArguments<Record<string, unknown>> {
  try {
    const validate = SCHEMA_VALIDATOR.getValidator<Record<string, unknown>>(schema as never)
    return (args) => {
      const result = validate(args)
      return result.valid
        ? { ok: true, args: args as Record<string, unknown> }
        : { ok: false, error: result.errorMessage ?? 'the arguments do not match the schema' }
    }
  } catch {
    return objectOnly
  }
}

/**
 * The longest progress text kept, in characters. Each report is kept in the history: a server
 * must not grow it by megabytes per notification.
 */
export const PROGRESS_TEXT_LIMIT = 1_000

/** A progress notification as one line: `3/5 Copying files`, `3`, `40%`... */
export function describeProgress(progress: { progress: number; total?: number; message?: string }): string {
  const amount =
    progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`
  return progress.message ? `${amount} ${progress.message}` : amount
}
