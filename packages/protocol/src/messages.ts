import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { TaskMetadata, ToolResultUiExtra, ToolSideEffect } from './metadata.js'
import { AssistantPart, ImagePart, ProviderFields, TextPart, UserContentPart } from './parts.js'
import { Usage } from './usage.js'

/** Fields every message and history record carries. */
const recordBase = {
  /**
   * Opaque and meant to be unique within its session. Kode generates UUIDs (`crypto.randomUUID()`,
   * unless a host injects `createId`), but any non-empty string is accepted so that imported
   * histories keep their ids: never parse one or assume its shape.
   */
  id: Type.String({ minLength: 1 }),
  /** Milliseconds since the Unix epoch. */
  createdAt: Type.Number(),
}

function message<R extends string, P extends Record<string, TSchema>>(role: R, props: P, $id: string) {
  return Type.Object({ role: Type.Literal(role), ...recordBase, ...props }, { $id })
}

/** A history record's schema: `type` as its discriminator, the fields every record carries, `props`. */
function record<T extends string, P extends Record<string, TSchema>>(type: T, props: P, $id: string) {
  return Type.Object({ type: Type.Literal(type), ...recordBase, ...props }, { $id })
}

/** The system prompt in effect. Persisted for resume; not replayed to the UI. */
export const SystemMessage = message('system', { parts: Type.Array(TextPart) }, 'SystemMessage')
export type SystemMessage = Static<typeof SystemMessage>

/**
 * Instructions injected by the host or engine (reminders, context). Persisted as its own message;
 * in provider input it is appended to the preceding user or tool message.
 */
export const DeveloperMessage = message(
  'developer',
  { parts: Type.Array(UserContentPart) },
  'DeveloperMessage',
)
export type DeveloperMessage = Static<typeof DeveloperMessage>

/**
 * The user's input. `mode` marks it as a request of a host-defined mode (the specification's
 * "Koding mode": `koding`), with optional `modeContext`; providers see them as a line before the
 * text (see docs/protocol.md).
 */
export const UserMessage = message(
  'user',
  {
    parts: Type.Array(UserContentPart),
    mode: Type.Optional(Type.String({ minLength: 1 })),
    modeContext: Type.Optional(Type.String()),
  },
  'UserMessage',
)
export type UserMessage = Static<typeof UserMessage>

/**
 * Why a response ended. `aborted` means the user interrupted, nothing else. A provider value we do
 * not know maps to no `stopReason`; the provider's own value is always kept in `rawStopReason`.
 */
export const StopReason = Type.Union([
  Type.Literal('stop'),
  Type.Literal('length'),
  Type.Literal('tool_use'),
  Type.Literal('error'),
  Type.Literal('aborted'),
])
export type StopReason = Static<typeof StopReason>

/**
 * What the provider said about why it stopped, beyond the stop value: Anthropic sends a refusal's
 * category and an explanation meant for the user. Absent when the provider says nothing more.
 */
export const StopDetails = Type.Object(
  {
    /** The provider's category of the stop (`cyber` for an Anthropic refusal). */
    category: Type.Optional(Type.String()),
    /** A human-readable explanation, for the host to show. */
    explanation: Type.Optional(Type.String()),
  },
  { $id: 'StopDetails' },
)
export type StopDetails = Static<typeof StopDetails>

/** One model response: ordered parts plus the response's metadata. */
export const AssistantMessage = message(
  'assistant',
  {
    parts: Type.Array(AssistantPart),
    usage: Type.Optional(Usage),
    stopReason: Type.Optional(StopReason),
    rawStopReason: Type.Optional(Type.String()),
    stopDetails: Type.Optional(StopDetails),
    responseId: Type.Optional(Type.String()),
    model: Type.Optional(Type.String()),
    /** Provider label chosen by the host (defaults to the wire api name). */
    provider: Type.Optional(Type.String()),
    /** The wire api that produced this message (`anthropic`, `openai-chat`, ...). */
    api: Type.Optional(Type.String()),
    costUsd: Type.Optional(Type.Number({ minimum: 0 })),
    durationMs: Type.Optional(Type.Number({ minimum: 0 })),
    /** The response failed at the API; see `errorMessage`. */
    isApiError: Type.Optional(Type.Boolean()),
    errorMessage: Type.Optional(Type.String()),
    /** Response fields the same wire format needs back (Anthropic `container`). */
    providerFields: Type.Optional(ProviderFields),
  },
  'AssistantMessage',
)
export type AssistantMessage = Static<typeof AssistantMessage>

export const ToolResultStatus = Type.Union([
  Type.Literal('success'),
  Type.Literal('error'),
  Type.Literal('aborted'),
])
export type ToolResultStatus = Static<typeof ToolResultStatus>

/**
 * The result of one tool call. All tool text lives in `outputText`; `parts` holds only non-text
 * parts (images). `aborted` is reserved for user interrupts; failures and timeouts are `error`.
 */
export const ToolResultMessage = message(
  'tool',
  {
    toolCallId: Type.String({ minLength: 1 }),
    toolName: Type.String(),
    status: ToolResultStatus,
    outputText: Type.String(),
    parts: Type.Array(ImagePart),
    uiExtra: Type.Optional(ToolResultUiExtra),
    sideEffects: Type.Optional(Type.Array(ToolSideEffect)),
    taskMetadata: Type.Optional(TaskMetadata),
  },
  'ToolResultMessage',
)
export type ToolResultMessage = Static<typeof ToolResultMessage>

export const Message = Type.Union([
  SystemMessage,
  DeveloperMessage,
  UserMessage,
  AssistantMessage,
  ToolResultMessage,
])
export type Message = Static<typeof Message>
export type MessageRole = Message['role']

export { record, recordBase }
