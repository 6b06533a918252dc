import type {
  ImagePart,
  TaskMetadata,
  ToolResultUiExtra,
  ToolSideEffect,
  UserContentPart,
} from '@kode/protocol'
import type { Static, TSchema } from '@sinclair/typebox'
import { AgentError } from '../errors.js'
import { isToolName } from '../tool-name.js'
import { createArgumentParser, type ParsedArguments } from './arguments.js'
import type { SubAgentOutcome, SubAgentSpec } from './sub-agent-spec.js'

/** What a running tool call can see and do. */
export interface ToolContext {
  /** Aborted when the user interrupts the task or the call times out; long work should stop. */
  readonly signal: AbortSignal
  readonly toolCallId: string
  readonly toolName: string
  /** The session the call belongs to (a sub-agent's own session inside a sub-agent). */
  readonly sessionId: string
  /** The provider's id of the response that asked for the call, when it sent one. */
  readonly responseId: string | undefined
  /**
   * True when the call runs again because the process that first ran it died before its result
   * was recorded (a tool with `onResume: 'rerun'`, continued with `agent.continue`). The first run
   * may have done some or all of its work: `toolCallId`, the same in both runs, is the key to make
   * the work idempotent.
   */
  readonly resumed: boolean
  /**
   * Reports progress to the host as a `tool_progress` event; ignored once the call has ended
   * (returned, thrown, timed out or interrupted).
   */
  progress(message: string): void
  /**
   * Runs a child agent in its own session (a sub-agent) and resolves with its outcome. Its events
   * appear on the parent's stream with the child's `sessionId`; interrupting the parent interrupts
   * it. `defineSubAgent` is this, packaged as a tool. A child that ends `awaiting_approval`
   * suspends this call (what the tool returns then is not used) and pauses the parent; when the
   * parent continues, the tool runs again with the same arguments and this carries on the paused
   * children, in the order they were started, with the user's decisions. The call's result waits
   * for every child it started and, unless the tool returns a `uiExtra` of its own, links them
   * all in start order. Once the call has ended (returned, timed out or interrupted) this rejects
   * with an `AgentError` (`tool_call_ended`) and starts nothing.
   */
  runSubAgent(spec: SubAgentSpec, input: string | readonly UserContentPart[]): Promise<SubAgentOutcome>
}

/** What a `needsApproval` function sees of the call. */
export interface ApprovalContext {
  readonly toolCallId: string
  readonly toolName: string
  readonly sessionId: string
  /** Aborted when the user interrupts the task. */
  readonly signal: AbortSignal
}

/**
 * Whether a call waits for the user's approval: always (`true`), or as the function decides from
 * the validated arguments (a function that throws counts as `true`: a check that failed never
 * lets a call through).
 */
export type NeedsApproval<A> = boolean | ((args: A, ctx: ApprovalContext) => boolean | Promise<boolean>)

/** A structured tool result. Only `outputText` is required. */
export interface ToolOutput {
  /** What the model reads. Capped by the agent's `toolOutputLimit` (head and tail kept). */
  outputText: string
  /** Images for the model (never text: text belongs in `outputText`). */
  parts?: readonly ImagePart[]
  /** Display-only data for the host (a diff, a todo list...); never sent to the model. */
  uiExtra?: ToolResultUiExtra
  /** What the result changed; `todo_change` with a `todo_list` UI extra emits a `todo_change` event. */
  sideEffects?: readonly ToolSideEffect[]
  /** `error` tells the model the call failed while still giving it `outputText`. Default `success`. */
  status?: 'success' | 'error'
  /** Accounting of work the tool did with a model of its own. */
  taskMetadata?: TaskMetadata
}

/**
 * What happens to a call that was running when its process died, once the task is continued
 * (`agent.continue`): `error` answers it with an error result that says it may or may not have
 * run; `rerun` runs it again with the same `toolCallId` (`ctx.resumed` is true), for idempotent
 * tools.
 */
export type OnResume = 'error' | 'rerun'

/** What `execute` may return: text, or a structured result. */
export type ToolReturn = string | ToolOutput

/** What `defineTool` takes. */
export interface ToolSpec<P extends TSchema> {
  /** The name the model calls: 1-64 characters from `A-Z a-z 0-9 _ -`, starting with a letter or `_`. */
  name: string
  /** Tells the model what the tool does and when to use it. */
  description: string
  /** A TypeBox schema (which is JSON Schema) of the arguments object. */
  parameters: P
  /**
   * Replaces the check of the parsed arguments against `parameters`, for a schema TypeBox cannot
   * check (plain JSON Schema from elsewhere, wrapped in `Type.Unsafe`). Returns the arguments
   * `execute` gets, or an error the model reads (`path: message`, as the built-in check words it).
   */
  validate?: (args: unknown) => ParsedArguments<Static<P>>
  /**
   * Runs the call with arguments already validated against `parameters`. Throwing (or rejecting)
   * makes an `error` result whose text is the error's message.
   */
  execute(args: Static<P>, ctx: ToolContext): ToolReturn | Promise<ToolReturn>
  /** Whether the call may run alongside other calls of the same response. Default `true`. */
  concurrent?: boolean
  /** Overrides the agent's `toolTimeoutMs` for this tool; `Infinity` means no timeout. */
  timeoutMs?: number
  /**
   * Whether a call waits for the user's approval before it runs (see "Tool approval" in
   * docs/agents.md). Default `false`.
   */
  needsApproval?: NeedsApproval<Static<P>>
  /**
   * A call that was running when the process died, on `agent.continue`: `error` (default) answers
   * it with an error result the model reads; `rerun` runs it again with the same `toolCallId`, for
   * tools that are idempotent or use the id as an idempotency key.
   */
  onResume?: OnResume
}

/** A tool ready for `createAgent`: the spec plus its compiled argument parser. */
export interface Tool<P extends TSchema = TSchema> {
  readonly name: string
  readonly description: string
  readonly parameters: P
  readonly concurrent: boolean
  readonly timeoutMs: number | undefined
  /** What a call left running by a process that died gets when the task is continued. */
  readonly onResume: OnResume
  /** Whether a call with these (validated) arguments waits for approval; `false` for most tools. */
  needsApproval(args: Static<P>, ctx: ApprovalContext): boolean | Promise<boolean>
  execute(args: Static<P>, ctx: ToolContext): ToolReturn | Promise<ToolReturn>
  /** Parses and validates `argumentsJson` (with the check `defineTool` compiled from the schema). */
  parseArguments(argumentsJson: string): ParsedArguments<Static<P>>
}

/**
 * Defines a tool the model can call. `args` in `execute` is typed from `parameters` and is
 * validated before `execute` runs: invalid JSON or arguments that do not match the schema become
 * an `error` result the model can read and correct, and `execute` is not called. The schema's
 * check is compiled here, once for every agent and task the tool serves. Throws `AgentError`
 * (`invalid_tool`) for a name providers would reject, a bad `timeoutMs` or `onResume`, `parameters`
 * that are not an object schema, and (without `validate`) `parameters` TypeBox cannot check, such
 * as plain JSON Schema.
 */
export function defineTool<P extends TSchema>(spec: ToolSpec<P>): Tool<P> {
  if (typeof spec.name !== 'string' || !isToolName(spec.name)) {
    throw new AgentError(
      'invalid_tool',
      `invalid tool name ${JSON.stringify(spec.name)}: use 1-64 characters from A-Z a-z 0-9 _ -, starting with a letter or _`,
    )
  }
  if (spec.timeoutMs !== undefined && !(spec.timeoutMs > 0)) {
    throw new AgentError(
      'invalid_tool',
      `tool ${spec.name}: timeoutMs must be a positive number of milliseconds`,
    )
  }
  if (spec.onResume !== undefined && spec.onResume !== 'error' && spec.onResume !== 'rerun') {
    throw new AgentError('invalid_tool', `tool ${spec.name}: onResume must be 'error' or 'rerun'`)
  }
  const notObject = notAnObjectSchema(spec.parameters)
  if (notObject !== undefined) {
    throw new AgentError(
      'invalid_tool',
      `tool ${spec.name}: parameters must be an object schema, such as Type.Object({ ... }) ` +
        `(Type.Object({}) for no arguments), as providers accept no other; this one has ${notObject}`,
    )
  }
  const parseArguments = createArgumentParser(spec.name, spec.parameters, spec.validate)
  const execute = spec.execute
  return Object.freeze({
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    concurrent: spec.concurrent ?? true,
    timeoutMs: spec.timeoutMs,
    onResume: spec.onResume ?? 'error',
    needsApproval: approvalCheck(spec.needsApproval),
    execute,
    parseArguments,
  })
}

/**
 * What a schema that does not describe the arguments object has for a type, or `undefined` for
 * one that does. Every provider takes only `type: "object"` at the top of a tool's schema (a union
 * of objects is refused too), so anything else would fail every model call that offers the tool.
 */
function notAnObjectSchema(schema: unknown): string | undefined {
  const type = typeof schema === 'object' && schema !== null ? (schema as { type?: unknown }).type : undefined
  if (type === 'object') return undefined
  return type === undefined ? 'no type' : `type ${JSON.stringify(type)}`
}

function approvalCheck<A>(
  needsApproval: NeedsApproval<A> | undefined,
): (args: A, ctx: ApprovalContext) => boolean | Promise<boolean> {
  if (typeof needsApproval === 'function') return needsApproval
  return needsApproval === true ? alwaysAsks : neverAsks
}

/**
 * The approval check of a tool that never asks (most tools): the engine recognises it and does
 * not parse a call's arguments only to ask it.
 */
export function neverAsks(): boolean {
  return false
}

function alwaysAsks(): boolean {
  return true
}
