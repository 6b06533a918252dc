import { APP_SESSION_ID, type EndEvent } from '@kode/protocol'

/**
 * The global display shutdown event (`sessionId` `__app__`). Only a host that shuts down emits it,
 * after its last task: the engine never does.
 */
export function createEndEvent(now: () => number = Date.now): EndEvent {
  return { type: 'end', sessionId: APP_SESSION_ID, timestamp: now() }
}
