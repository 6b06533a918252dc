/**
 * @kode/protocol: the schemas every Kode package speaks. Static types are derived from the
 * TypeBox schemas (`Static<typeof X>`), so each type and its runtime validator are one thing.
 */
export { CodecError } from './codec/codec-error.js'
export { decodeEvent, encodeEvent, validateEvent } from './codec/event-codec.js'
export {
  decodeHistoryEvent,
  encodeHistoryEvent,
  HISTORY_FORMAT_VERSION,
  roundTripHistoryEvent,
  validateHistoryEvent,
} from './codec/history-codec.js'
export {
  ApprovalDecisionRecord,
  ApprovalRequestRecord,
  SubAgentCall,
  ToolProgressRecord,
} from './control-records.js'
export * from './events/index.js'
// The plain functions, listed once in the helpers entry (`@kode/protocol/helpers`).
export * from './helpers.js'
export {
  CompactionAttempt,
  CompactionRecord,
  ErrorRecord,
  HistoryEvent,
  HistoryRecord,
  InterruptRecord,
  isMessage,
  RecordTurn,
  TaskMetadataRecord,
} from './history.js'
export {
  AssistantMessage,
  DeveloperMessage,
  Message,
  type MessageRole,
  StopDetails,
  StopReason,
  SystemMessage,
  ToolResultMessage,
  ToolResultStatus,
  UserMessage,
} from './messages.js'
export {
  SubAgentState,
  TaskMetadata,
  TaskMetadataSummary,
  TodoItem,
  TodoStatus,
  ToolResultUiExtra,
  ToolSideEffect,
} from './metadata.js'
export { checkEventOrder, type OrderRule, type OrderViolation } from './order/check-event-order.js'
export {
  AssistantPart,
  Citation,
  ImageFilePart,
  ImagePart,
  ImageUrlPart,
  Part,
  ProviderFields,
  type ServerToolBlock,
  ServerToolPart,
  SignatureFormat,
  TextPart,
  ThinkingSignaturePart,
  ThinkingTextPart,
  ToolCallPart,
  UserContentPart,
} from './parts.js'
export { StreamItem, type StreamItemType, ToolDefinition } from './stream-items.js'
export { ModelPrices, Usage } from './usage.js'
