import type pg from 'pg'
import { InFlight } from './in-flight.js'
import type { StorePool } from './store-pool.js'

/** A follower's view of the notifications for its session. */
export interface Subscription {
  /**
   * Resolves once the session may have changed since the last call: a notification for it came,
   * the notification connection was lost (records may have been missed meanwhile), `pollMs`
   * passed, `signal` aborted, or the listener closed. Connects the listener first when needed.
   */
  changed(signal: AbortSignal | undefined): Promise<void>
  /**
   * Whether a notification for the session came since the last call: its append or delete was
   * committed while the connection listened. Unlike `changed`, a lost connection or a poll does
   * not count, so it proves the session existed meanwhile.
   */
  heard(): boolean
  /** Stops listening for this follower. */
  close(): void
}

interface Follower {
  sessionId: string
  /** Something happened since the follower last looked. */
  dirty: boolean
  /** A notification for the session came since the follower last asked. */
  heard: boolean
  wake?: () => void
}

/**
 * How often the listening connection is asked whether it still answers, at most (never less often
 * than followers poll): a connection that died silently is found within two of these.
 */
const HEARTBEAT_MS = 5_000

/** The notification a committed append or delete sends: which session, and its record count. */
export interface FeedNotice {
  session: string
  count?: number
  deleted?: true
}

/**
 * One `LISTEN` connection per store, shared by all its followers: a committed append notifies the
 * store's channel with the session id and its new record count, and the listener wakes that
 * session's followers, which then read from their last position. The connection is opened beside
 * the pool (made from its options, never one of its connections, so following cannot starve the
 * store's reads and appends) while anything follows, and closed when nothing does. When it is
 * lost, every follower is woken (it reads what it missed) and the next wait connects again,
 * polling meanwhile. A connection whose network path died with no reset (a cut cable, a NAT or
 * firewall that dropped it) reports nothing, and a listening connection sends nothing on its own:
 * so the listener asks it something every `heartbeatMs`, and one that has not answered by the
 * next ask is taken for lost.
 */
export class FeedListener {
  readonly #pool: StorePool
  readonly #channel: string
  readonly #pollMs: number
  readonly #heartbeatMs: number
  readonly #followers = new Set<Follower>()
  #client: pg.Client | undefined
  #heartbeat: ReturnType<typeof setInterval> | undefined
  /** Connections being closed, which `close()` waits for. */
  readonly #ending = new InFlight()
  #connecting: Promise<void> | undefined
  #closed = false

  constructor(pool: StorePool, channel: string, pollMs: number) {
    this.#pool = pool
    this.#channel = channel
    this.#pollMs = pollMs
    this.#heartbeatMs = Math.min(pollMs, HEARTBEAT_MS)
  }

  subscribe(sessionId: string): Subscription {
    const follower: Follower = { sessionId, dirty: false, heard: false }
    this.#followers.add(follower)
    return {
      changed: (signal) => this.#changed(follower, signal),
      heard: () => {
        const heard = follower.heard
        follower.heard = false
        return heard
      },
      close: () => {
        this.#followers.delete(follower)
        follower.wake?.()
        if (this.#followers.size === 0) this.#disconnect()
      },
    }
  }

  /** Wakes every follower for good (the store closed) and closes the connection. */
  async close(): Promise<void> {
    this.#closed = true
    for (const follower of this.#followers) follower.wake?.()
    this.#disconnect()
    // A connection being opened closes itself once it is open.
    await this.#connecting?.catch(() => {})
    await this.#ending.settled()
  }

  /** Makes sure the connection listens, so a notification after this resolves is not missed. */
  async listening(): Promise<boolean> {
    if (this.#client) return true
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined
    })
    await this.#connecting.catch(() => {})
    return this.#client !== undefined
  }

  async #changed(follower: Follower, signal: AbortSignal | undefined): Promise<void> {
    if (!follower.dirty) {
      // Without the connection nothing would wake this follower: poll soon instead.
      const listening = await this.listening()
      const wait = listening ? this.#pollMs : Math.min(this.#pollMs, 1_000)
      if (!follower.dirty && !this.#closed && !signal?.aborted) {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer)
            signal?.removeEventListener('abort', done)
            follower.wake = undefined
            resolve()
          }
          const timer = setTimeout(done, wait)
          signal?.addEventListener('abort', done, { once: true })
          follower.wake = done
        })
      }
    }
    follower.dirty = false
  }

  async #connect(): Promise<void> {
    if (this.#closed || this.#followers.size === 0) return
    const client = this.#pool.dedicatedClient()
    const lost = () => {
      if (this.#client !== client) return
      this.#client = undefined
      this.#stopHeartbeat()
      this.#end(client)
      this.#wakeAll()
    }
    // Listened to from the start: an error event without a listener would crash the host.
    client.on('error', lost)
    client.on('end', lost)
    client.on('notification', (message) => {
      if (message.channel !== this.#channel || !message.payload) return
      let notice: FeedNotice
      try {
        notice = JSON.parse(message.payload) as FeedNotice
      } catch {
        return
      }
      for (const follower of this.#followers) {
        if (follower.sessionId !== notice.session) continue
        follower.dirty = true
        follower.heard = true
        follower.wake?.()
      }
    })
    try {
      await client.connect()
      await client.query(`listen "${this.#channel}"`)
    } catch (error) {
      this.#end(client)
      throw error
    }
    this.#client = client
    this.#startHeartbeat(client, lost)
    // Appends committed while the connection was being set up were not heard: look again.
    this.#wakeAll()
    if (this.#closed || this.#followers.size === 0) this.#disconnect()
  }

  #wakeAll(): void {
    for (const follower of this.#followers) {
      follower.dirty = true
      follower.wake?.()
    }
  }

  #disconnect(): void {
    const client = this.#client
    if (!client) return
    this.#client = undefined
    this.#stopHeartbeat()
    this.#end(client)
  }

  /**
   * Asks the connection a trivial question every `heartbeatMs`; one still unanswered at the next
   * ask (or refused) means the connection is lost. The question is still under way then, so ending
   * the client destroys its socket instead of waiting for a goodbye that would never come.
   */
  #startHeartbeat(client: pg.Client, lost: () => void): void {
    let answered = true
    this.#heartbeat = setInterval(() => {
      if (!answered) return lost()
      answered = false
      client.query('select 1').then(() => {
        answered = true
      }, lost)
    }, this.#heartbeatMs)
    // Following must not keep a host process alive on its own.
    this.#heartbeat.unref?.()
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat)
    this.#heartbeat = undefined
  }

  #end(client: pg.Client): void {
    this.#ending.track(client.end().catch(() => {}))
  }
}
