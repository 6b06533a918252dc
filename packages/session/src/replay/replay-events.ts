import {
  type AssistantImageDeltaEvent,
  type AssistantMessage,
  citationsOf,
  joinText,
  joinThinking,
  type ReplayEvent,
  type ResponseCompleteEvent,
  serverToolsOf,
  type ToolCallEvent,
  type ToolResultEvent,
  type ToolResultMessage,
  toolResultEventStatus,
  type UsageEvent,
  type UserMessage,
} from '@kode/protocol'

// The events one record replays as, built without state. Literal objects with the optional fields
// set afterwards, not spreads: replaying a long session builds hundreds of thousands of them, and
// objects of one shape keep the consumers' property reads fast. Loops over parts go by index, not
// `for...of`: V8's optimizing compiler does far less work for them, and that compilation is most of
// the fixed cost of replaying a session.

/** The `user_message` of a user message. */
export function userMessageEvent(sessionId: string, message: UserMessage): ReplayEvent {
  const { parts, mode, modeContext } = message
  const event: Extract<ReplayEvent, { type: 'user_message' }> = {
    type: 'user_message',
    sessionId,
    timestamp: message.createdAt,
    content: joinText(parts),
  }
  // Most prompts are text only: no array is made for them.
  let images: Exclude<UserMessage['parts'][number], { type: 'text' }>[] | undefined
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part.type === 'text') continue
    images ??= []
    images.push(part)
  }
  if (images !== undefined) event.images = images
  if (mode !== undefined) event.mode = mode
  if (modeContext !== undefined) event.modeContext = modeContext
  return event
}

/** Where `emitResponse` puts a response's events (the replay of a session, without a closure). */
export interface ReplaySink {
  emit(event: ReplayEvent): void
}

/**
 * A response's events up to its tool calls, in the order they streamed: an
 * `assistant_image_delta` per image part, `response_complete`, then `usage` when the response
 * carries usage and is not an error.
 */
export function emitResponse(sessionId: string, message: AssistantMessage, sink: ReplaySink): void {
  const { createdAt: timestamp, responseId, parts } = message
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    // Images stream before the response completes, so they are replayed before it too.
    if (part.type === 'image_file' || part.type === 'image_url') {
      const image: AssistantImageDeltaEvent = { type: 'assistant_image_delta', sessionId, timestamp }
      if (responseId !== undefined) image.responseId = responseId
      if (part.type === 'image_file') image.filePath = part.path
      else image.url = part.url
      sink.emit(image)
    }
  }
  sink.emit(responseCompleteEvent(sessionId, message))
  if (message.usage && !message.isApiError && message.stopReason !== 'error') {
    sink.emit(usageEvent(sessionId, message, message.usage))
  }
}

/**
 * The `response_complete` of a response. The usual optional fields are in the literal, not set
 * afterwards: a field added to an object after it is made goes to a separate, extra allocation.
 */
function responseCompleteEvent(sessionId: string, message: AssistantMessage): ResponseCompleteEvent {
  const { createdAt: timestamp, responseId, parts } = message
  const content = joinText(parts)
  const thinkingText = joinThinking(parts)
  let complete: ResponseCompleteEvent
  if (responseId === undefined) {
    complete =
      thinkingText === undefined
        ? { type: 'response_complete', sessionId, timestamp, content }
        : { type: 'response_complete', sessionId, timestamp, content, thinkingText }
  } else {
    complete =
      thinkingText === undefined
        ? { type: 'response_complete', sessionId, timestamp, responseId, content }
        : { type: 'response_complete', sessionId, timestamp, responseId, content, thinkingText }
  }
  const serverTools = serverToolsOf(parts)
  if (serverTools !== undefined) complete.serverTools = serverTools
  const citations = citationsOf(parts)
  if (citations !== undefined) complete.citations = citations
  return complete
}

/** The `usage` of a response that carries usage. */
function usageEvent(sessionId: string, message: AssistantMessage, usage: UsageEvent['usage']): UsageEvent {
  const { createdAt: timestamp, responseId, costUsd } = message
  if (responseId === undefined) {
    return costUsd === undefined
      ? { type: 'usage', sessionId, timestamp, usage }
      : { type: 'usage', sessionId, timestamp, usage, costUsd }
  }
  return costUsd === undefined
    ? { type: 'usage', sessionId, timestamp, responseId, usage }
    : { type: 'usage', sessionId, timestamp, responseId, usage, costUsd }
}

/** The `tool_call` of one tool-call part of a response. */
export function toolCallEvent(
  sessionId: string,
  message: AssistantMessage,
  part: { id: string; name: string; argumentsJson: string },
): ToolCallEvent {
  const { createdAt: timestamp, responseId } = message
  return responseId === undefined
    ? {
        type: 'tool_call',
        sessionId,
        timestamp,
        toolCallId: part.id,
        toolName: part.name,
        arguments: part.argumentsJson,
      }
    : {
        type: 'tool_call',
        sessionId,
        timestamp,
        responseId,
        toolCallId: part.id,
        toolName: part.name,
        arguments: part.argumentsJson,
      }
}

/** The `tool_result` of a tool result, with the response id of the call it answers. */
export function toolResultEvent(
  sessionId: string,
  result: ToolResultMessage,
  responseId: string | undefined,
  isLastInTurn: boolean,
): ToolResultEvent {
  const { createdAt: timestamp, toolCallId, toolName, outputText } = result
  const status = toolResultEventStatus(result.status)
  const event: ToolResultEvent =
    responseId === undefined
      ? {
          type: 'tool_result',
          sessionId,
          timestamp,
          toolCallId,
          toolName,
          result: outputText,
          status,
          isLastInTurn,
        }
      : {
          type: 'tool_result',
          sessionId,
          timestamp,
          responseId,
          toolCallId,
          toolName,
          result: outputText,
          status,
          isLastInTurn,
        }
  if (result.uiExtra) event.uiExtra = result.uiExtra
  if (result.taskMetadata) event.taskMetadata = result.taskMetadata
  return event
}
