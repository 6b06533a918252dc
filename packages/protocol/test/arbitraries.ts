import type {
  ApprovalDecisionRecord,
  ApprovalRequestRecord,
  AssistantMessage,
  CompactionAttempt,
  CompactionRecord,
  DeveloperMessage,
  ErrorRecord,
  HistoryEvent,
  InterruptRecord,
  Part,
  SystemMessage,
  TaskMetadata,
  TaskMetadataRecord,
  ToolProgressRecord,
  ToolResultMessage,
  ToolResultUiExtra,
  Usage,
  UserMessage,
} from '@kode/protocol'
import * as fc from 'fast-check'

// Full Unicode, lone surrogates included: the codec must carry any JS string losslessly.
const str = fc.string({ unit: 'binary', maxLength: 40 })
const nonEmpty = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 })
const count = fc.nat({ max: 2_000_000 })
const money = fc
  .double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true })
  .map((x) => (x === 0 ? 0 : x))
const base = { id: fc.uuid(), createdAt: fc.integer({ min: 0, max: 2 ** 45 }) }

/** Plain objects (fast-check may otherwise build null-prototype ones). */
function rec<T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<T> {
  return fc.record(model, { noNullPrototype: true }) as fc.Arbitrary<T>
}

/** A record where every key not listed in `required` may be absent. */
function partial<T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }, required: (keyof T)[]): fc.Arbitrary<T> {
  return fc.record(model, { requiredKeys: required, noNullPrototype: true }) as fc.Arbitrary<T>
}

export const usage: fc.Arbitrary<Usage> = partial<Usage>(
  {
    inputTokens: count,
    outputTokens: count,
    totalTokens: count,
    cacheReadTokens: count,
    cacheWriteTokens: count,
    reasoningTokens: count,
  },
  [],
)

export const textPart = partial({ type: fc.constant('text' as const), text: str, itemId: str, phase: str }, [
  'type',
  'text',
])
export const imageUrlPart = rec({
  type: fc.constant('image_url' as const),
  url: fc.tuple(fc.constantFrom('https://', 'http://', 'data:image/png;base64,'), str).map(([a, b]) => a + b),
})
export const imageFilePart = rec({
  type: fc.constant('image_file' as const),
  path: nonEmpty,
  mimeType: fc.constantFrom('image/png', 'image/jpeg', 'image/webp'),
})
export const thinkingTextPart = rec({ type: fc.constant('thinking_text' as const), text: str })
export const thinkingSignaturePart = partial(
  {
    type: fc.constant('thinking_signature' as const),
    signature: str,
    format: fc.constantFrom(
      'anthropic' as const,
      'google' as const,
      'openai-responses' as const,
      'openrouter' as const,
    ),
    model: str,
    itemId: str,
    redacted: fc.boolean(),
  },
  ['type', 'signature', 'format', 'model'],
)
export const toolCallPart = partial(
  {
    type: fc.constant('tool_call' as const),
    id: nonEmpty,
    name: str,
    argumentsJson: str,
    itemId: str,
    incomplete: fc.boolean(),
  },
  ['type', 'id', 'name', 'argumentsJson'],
)

export const part: fc.Arbitrary<Part> = fc.oneof(
  textPart,
  imageUrlPart,
  imageFilePart,
  thinkingTextPart,
  thinkingSignaturePart,
  toolCallPart,
)
const userContent = fc.array(fc.oneof(textPart, imageUrlPart, imageFilePart), { maxLength: 4 })

export const systemMessage: fc.Arbitrary<SystemMessage> = rec({
  role: fc.constant('system' as const),
  ...base,
  parts: fc.array(textPart, { maxLength: 3 }),
})
export const developerMessage: fc.Arbitrary<DeveloperMessage> = rec({
  role: fc.constant('developer' as const),
  ...base,
  parts: userContent,
})
export const userMessage: fc.Arbitrary<UserMessage> = rec({
  role: fc.constant('user' as const),
  ...base,
  parts: userContent,
})
export const assistantMessage: fc.Arbitrary<AssistantMessage> = partial<AssistantMessage>(
  {
    role: fc.constant('assistant' as const),
    ...base,
    parts: fc.array(part, { maxLength: 6 }),
    usage,
    stopReason: fc.constantFrom(
      'stop' as const,
      'length' as const,
      'tool_use' as const,
      'error' as const,
      'aborted' as const,
    ),
    rawStopReason: str,
    stopDetails: partial({ category: str, explanation: str }, []),
    responseId: str,
    model: str,
    provider: str,
    api: str,
    costUsd: money,
    durationMs: money,
    isApiError: fc.boolean(),
    errorMessage: str,
  },
  ['role', 'id', 'createdAt', 'parts'],
)

const todo = partial(
  {
    content: str,
    status: fc.constantFrom('pending' as const, 'in_progress' as const, 'completed' as const),
    activeForm: str,
  },
  ['content', 'status'],
)
export const uiExtra: fc.Arbitrary<ToolResultUiExtra> = fc.oneof(
  partial({ type: fc.constant('diff' as const), diff: str, path: str }, ['type', 'diff']),
  rec({ type: fc.constant('todo_list' as const), todos: fc.array(todo, { maxLength: 3 }) }),
  rec({ type: fc.constant('markdown' as const), markdown: str }),
  rec({ type: fc.constant('session' as const), sessionId: str }),
  rec({
    type: fc.constant('json' as const), // -0 has no JSON form: a JSON value is what survives JSON itself.
    value: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown),
  }),
)
export const taskMetadata: fc.Arbitrary<TaskMetadata> = partial<TaskMetadata>(
  {
    sessionId: str,
    subAgentName: str,
    model: str,
    provider: str,
    usage,
    costUsd: money,
    durationMs: money,
    turnCount: fc.nat({ max: 1000 }),
  },
  [],
)
export const toolResultMessage: fc.Arbitrary<ToolResultMessage> = partial<ToolResultMessage>(
  {
    role: fc.constant('tool' as const),
    ...base,
    toolCallId: nonEmpty,
    toolName: str,
    status: fc.constantFrom('success' as const, 'error' as const, 'aborted' as const),
    outputText: str,
    parts: fc.array(fc.oneof(imageUrlPart, imageFilePart), { maxLength: 3 }),
    uiExtra,
    sideEffects: fc.array(fc.constantFrom('todo_change', 'custom_effect'), { maxLength: 2 }),
    taskMetadata,
  },
  ['role', 'id', 'createdAt', 'toolCallId', 'toolName', 'status', 'outputText', 'parts'],
)

const compactionReason = fc.constantFrom('threshold' as const, 'overflow' as const, 'manual' as const)
const retryNotices = fc.array(str, { minLength: 1, maxLength: 2 })
const compactionAttempt = partial<CompactionAttempt>(
  { reason: compactionReason, tokensBefore: fc.nat(), retries: retryNotices },
  ['reason', 'tokensBefore'],
)

export const errorRecord: fc.Arbitrary<ErrorRecord> = partial<ErrorRecord>(
  {
    type: fc.constant('error' as const),
    ...base,
    message: str,
    canRetry: fc.boolean(),
    status: fc.integer({ min: 100, max: 599 }),
    code: str,
    compaction: compactionAttempt,
  },
  ['type', 'id', 'createdAt', 'message', 'canRetry'],
)
export const taskMetadataRecord: fc.Arbitrary<TaskMetadataRecord> = rec({
  type: fc.constant('task_metadata' as const),
  ...base,
  metadata: rec({ main: taskMetadata, subAgents: fc.array(taskMetadata, { maxLength: 2 }) }),
})
export const interruptRecord: fc.Arbitrary<InterruptRecord> = partial<InterruptRecord>(
  { type: fc.constant('interrupt' as const), ...base, compaction: compactionAttempt },
  ['type', 'id', 'createdAt'],
)

export const compactionRecord: fc.Arbitrary<CompactionRecord> = partial<CompactionRecord>(
  {
    type: fc.constant('compaction' as const),
    ...base,
    summary: str,
    firstKeptId: fc.uuid(),
    tokensBefore: fc.nat(),
    tokensAfter: fc.nat(),
    reason: compactionReason,
    usage,
    costUsd: fc.double({ min: 0, max: 10, noNaN: true }),
    model: str,
    retries: retryNotices,
  },
  ['type', 'id', 'createdAt', 'summary', 'firstKeptId', 'tokensBefore', 'tokensAfter', 'reason'],
)

export const approvalRequestRecord: fc.Arbitrary<ApprovalRequestRecord> = partial<ApprovalRequestRecord>(
  {
    type: fc.constant('approval_request' as const),
    ...base,
    toolCallId: str,
    toolName: str,
    arguments: str,
    responseId: str,
    sessionId: str,
    subAgentCall: rec({ toolCallId: str, sessionId: str }),
    subAgentResponseId: str,
  },
  ['type', 'id', 'createdAt', 'toolCallId', 'toolName', 'arguments'],
)
export const approvalDecisionRecord: fc.Arbitrary<ApprovalDecisionRecord> = partial<ApprovalDecisionRecord>(
  {
    type: fc.constant('approval_decision' as const),
    ...base,
    toolCallId: str,
    toolName: str,
    approved: fc.boolean(),
    reason: str,
    sessionId: str,
  },
  ['type', 'id', 'createdAt', 'toolCallId', 'toolName', 'approved'],
)
export const toolProgressRecord: fc.Arbitrary<ToolProgressRecord> = partial<ToolProgressRecord>(
  {
    type: fc.constant('tool_progress' as const),
    ...base,
    toolCallId: str,
    toolName: str,
    message: str,
    siblingToolCallIds: fc.array(str, { maxLength: 3 }),
    responseId: str,
  },
  ['type', 'id', 'createdAt', 'toolCallId', 'toolName', 'message', 'siblingToolCallIds'],
)

export const historyEvent: fc.Arbitrary<HistoryEvent> = fc.oneof(
  systemMessage,
  developerMessage,
  userMessage,
  assistantMessage,
  toolResultMessage,
  errorRecord,
  taskMetadataRecord,
  interruptRecord,
  compactionRecord,
  approvalRequestRecord,
  approvalDecisionRecord,
  toolProgressRecord,
)
