import type { AssistantMessage, ErrorRecord } from '@kode/protocol'
import {
  type LLMClient,
  type LLMRequest,
  ProviderError,
  type RetryInfo,
  readReadyItems,
  retryAllowed,
  retryDelayMs,
} from '@kode/providers'
import { abortableSleep } from '../abortable-sleep.js'
import { billedBy } from '../billed.js'
import { statusAndCode } from '../error-fields.js'
import { retryNotice } from '../retry-notice.js'
import { thrownText } from '../thrown-text.js'
import type { TaskAccounting } from './accounting.js'
import type { TaskRuntime } from './runtime.js'
import { ResponseEvents } from './stream-events.js'
import { TransportRetries } from './transport-retries.js'

/** How one model call ended, after the engine's own retries. */
export type ModelResult =
  /** A finished response (any stop reason but `aborted`). */
  | { kind: 'complete'; message: AssistantMessage }
  /** The user interrupted; `partial` is what the response had produced, if anything. */
  | { kind: 'aborted'; partial: AssistantMessage | undefined }
  /** The provider failed for good; `error.partial` is what the last attempt had produced. */
  | { kind: 'failed'; error: ProviderError }

/**
 * Streams one response into events. The transport retries failures that happen before any
 * output (each announced here as an `error` event with `canRetry: true`). A retryable failure
 * after output was streamed is the engine's to retry: the open streams close, an `error` with
 * `canRetry: true` is emitted, and the same request is sent again; the partial response is
 * discarded. Either way, the retry's notice is kept on an `error` record with `canRetry: true`
 * and `retry: true`, written before that event, with what the retried attempt's provider reported
 * it billed (usage, cost), counted in `accounting`; a transport retry's record and event come
 * before anything the stream gave after it. Anything but a `ProviderError` (a bug in a custom client)
 * fails the task as a host failure (`rt.failHost`): the call reads as aborted, and the turn fails.
 */
export async function callModel(
  rt: TaskRuntime,
  client: LLMClient,
  request: LLMRequest,
  accounting: Pick<TaskAccounting, 'addResponse'>,
): Promise<ModelResult> {
  const { signal, events } = rt
  const { retry, now } = rt.settings
  const startedAt = now()
  // One rule for a retry, the transport's or the engine's: its record, then the notice.
  const announceRetry = async (
    error: ProviderError,
    partial: AssistantMessage | undefined,
    delayMs: number,
  ) => {
    const errorMessage = retryNotice(error, delayMs)
    await keepRetry(rt, accounting, error, partial, errorMessage)
    events.emit('error', { errorMessage, canRetry: true })
  }
  const retries = new TransportRetries((info: RetryInfo) =>
    announceRetry(info.error, info.partial, info.delayMs),
  )
  const options = { signal, onRetry: retries.onRetry }

  for (let attempt = 1; ; attempt++) {
    const sentAt = now()
    // The agent's clock stamps what it keeps of the response, as it stamps every other record.
    const stamp = (message: AssistantMessage) => stampedBy(message, sentAt, now)
    const response = new ResponseEvents(events)
    let delivered = false
    let message: AssistantMessage | undefined
    try {
      // One async turn per batch of items ready together, not per item; each item is taken when
      // handled, so an interrupt from a listener stops the response where item by item would.
      for await (const ready of readReadyItems(client.stream(request, options))) {
        // The transport's retries are written and announced before what came after them.
        if (retries.pending) await retries.settled()
        for (const item of ready) {
          if (item.type === 'done') message = response.push(item)
          else {
            delivered = true
            response.push(item)
          }
        }
      }
    } catch (error) {
      response.close()
      await retries.settled()
      const partial = ProviderError.is(error) && error.partial ? stamp(error.partial) : undefined
      if (signal.aborted) return { kind: 'aborted', partial }
      if (!ProviderError.is(error)) {
        // A bug in a custom client, not the provider's answer: the task fails as for a throwing
        // hook, its error kept in the history, and the run rejects with what was thrown.
        rt.failHost(error, `The model client threw: ${thrownText(error)}`)
        return { kind: 'aborted', partial: undefined }
      }
      const delayMs = retryDelayMs(attempt, error.retryAfterMs, retry)
      if (delivered && error.retryable && retryAllowed(attempt, now() - startedAt, delayMs, retry)) {
        await announceRetry(error, error.partial, delayMs)
        if (!(await abortableSleep(delayMs, signal))) return { kind: 'aborted', partial: undefined }
        continue
      }
      if (partial) error.partial = partial
      return { kind: 'failed', error }
    }
    response.close()
    await retries.settled()
    if (message === undefined) {
      if (signal.aborted) return { kind: 'aborted', partial: undefined }
      const error = new ProviderError(`${client.provider}: the stream ended without a final message`, {
        code: 'invalid_response',
        retryable: false,
      })
      return { kind: 'failed', error }
    }
    if (message.stopReason === 'aborted') return { kind: 'aborted', partial: stamp(message) }
    return { kind: 'complete', message: stamp(message) }
  }
}

/**
 * `message` stamped by the agent's clock: `createdAt` when the engine sent the request, `durationMs`
 * until now (the client's retries before any output included, as the client measures it). The
 * client stamps by its own clock, which a host may not have given the agent's.
 */
function stampedBy(message: AssistantMessage, sentAt: number, now: () => number): AssistantMessage {
  return { ...message, createdAt: sentAt, durationMs: Math.max(0, now() - sentAt) }
}

/**
 * Keeps a retry's notice: an `error` record with `canRetry: true` and `retry: true`, which replay
 * shows in the turn of the response that follows, as live. When the retried attempt's provider
 * billed it, the record keeps the attempt's usage and the task counts it, so the task's records
 * add up to its `task_metadata`.
 */
async function keepRetry(
  rt: TaskRuntime,
  accounting: Pick<TaskAccounting, 'addResponse'>,
  error: ProviderError,
  partial: AssistantMessage | undefined,
  message: string,
): Promise<void> {
  const { createId, now } = rt.settings
  const billed = partial?.usage ? partial : undefined
  const record: ErrorRecord = {
    type: 'error',
    id: createId(),
    createdAt: now(),
    message,
    canRetry: true,
    retry: true,
    ...statusAndCode(error),
    ...(billed ? billedBy(billed) : {}),
  }
  await rt.journal.persist(record)
  if (billed) accounting.addResponse(billed)
}
