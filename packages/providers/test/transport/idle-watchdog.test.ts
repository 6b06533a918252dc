import { afterEach, beforeEach, expect, test, vi } from 'vitest'
import { IdleWatchdog } from '../../src/transport/idle-watchdog.js'

beforeEach(() => vi.useFakeTimers())
afterEach(() => vi.useRealTimers())

test('fires once nothing touched it for the timeout', () => {
  const onIdle = vi.fn()
  const dog = new IdleWatchdog(1_000, onIdle)
  dog.start()
  vi.advanceTimersByTime(600)
  dog.touch()
  vi.advanceTimersByTime(600)
  expect(onIdle).not.toHaveBeenCalled()
  vi.advanceTimersByTime(400)
  expect(onIdle).toHaveBeenCalledTimes(1)
})

test('does not fire after stop', () => {
  const onIdle = vi.fn()
  const dog = new IdleWatchdog(1_000, onIdle)
  dog.start()
  dog.stop()
  vi.advanceTimersByTime(5_000)
  expect(onIdle).not.toHaveBeenCalled()
})

test('a zero timeout disables it', () => {
  const onIdle = vi.fn()
  new IdleWatchdog(0, onIdle).start()
  vi.advanceTimersByTime(60_000)
  expect(onIdle).not.toHaveBeenCalled()
})
