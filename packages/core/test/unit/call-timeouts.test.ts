import { afterEach, describe, expect, test, vi } from 'vitest'
import { CallTimeouts } from '../../src/tools/call-timeouts.js'

afterEach(() => {
  vi.restoreAllMocks()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("the timeouts of a batch's calls, through one timer", () => {
  test('calls that end in time never time out, and the timer is cleared when none waits', async () => {
    const setSpy = vi.spyOn(globalThis, 'setTimeout')
    const clearSpy = vi.spyOn(globalThis, 'clearTimeout')
    const timeouts = new CallTimeouts()
    const fired: string[] = []
    const stops = ['a', 'b', 'c'].map((name) => timeouts.start(10_000, () => fired.push(name)))
    // One timer for the three calls, armed by the first.
    expect(setSpy).toHaveBeenCalledTimes(1)
    for (const stop of stops) stop()
    expect(clearSpy).toHaveBeenCalledTimes(1)
    stops[0]!()
    expect(clearSpy).toHaveBeenCalledTimes(1)
    expect(fired).toEqual([])
  })

  test('each call times out once its own time has passed, in the order the calls started', async () => {
    const timeouts = new CallTimeouts()
    const fired: { name: string; after: number }[] = []
    const t0 = performance.now()
    const start = (name: string, ms: number) =>
      timeouts.start(ms, () => fired.push({ name, after: performance.now() - t0 }))
    start('slow', 60)
    start('fast', 15)
    const stopped = start('ended', 15)
    start('fast too', 15)
    stopped()
    await sleep(40)
    expect(fired.map((f) => f.name)).toEqual(['fast', 'fast too'])
    await sleep(60)
    expect(fired.map((f) => f.name)).toEqual(['fast', 'fast too', 'slow'])
    // Never before its own timeout (timers may round down by up to a millisecond).
    expect(fired[0]!.after).toBeGreaterThanOrEqual(14)
    expect(fired[2]!.after).toBeGreaterThanOrEqual(59)
  })

  test('a call started after others with an earlier deadline re-arms the timer for it', async () => {
    const timeouts = new CallTimeouts()
    const fired: string[] = []
    const stopLong = timeouts.start(5_000, () => fired.push('long'))
    const stopShort = timeouts.start(10, () => fired.push('short'))
    await sleep(50)
    expect(fired).toEqual(['short'])
    stopShort()
    const clearSpy = vi.spyOn(globalThis, 'clearTimeout')
    stopLong()
    // The timer re-armed for the long call is cleared with it.
    expect(clearSpy).toHaveBeenCalledTimes(1)
    expect(fired).toEqual(['short'])
  })
})
