import type { EventOf, EventType } from '@kode/protocol'

type Fields<T extends EventType> = Omit<EventOf<T>, 'type' | 'sessionId' | 'timestamp'> & {
  sessionId?: string
  timestamp?: number
}

/** Builds a protocol event for tests: session `main` and timestamp 0 unless given. */
export function ev<T extends EventType>(type: T, fields: Fields<T>): EventOf<T> {
  return { sessionId: 'main', timestamp: 0, ...fields, type } as unknown as EventOf<T>
}
