import { UpstreamTimeoutError } from '../../../lambda/base/errors';
import {
  SingleFlight,
  type Flight,
  type FollowerOutcome,
  type LeaderFlight,
} from '../../../lambda/cache/single-flight';

interface Answer {
  body: string;
}

function asLeader(flight: Flight<Answer>): LeaderFlight<Answer> {
  if (!flight.leader) throw new Error('expected to lead');
  return flight;
}

function asFollower(flight: Flight<Answer>): Promise<FollowerOutcome<Answer>> {
  if (flight.leader) throw new Error('expected to follow');
  return flight.outcome;
}

describe('SingleFlight', () => {
  it('makes the first caller the leader and serves its answer to every follower', async () => {
    const flights = new SingleFlight<Answer>(10_000);
    const leader = asLeader(flights.join('k'));
    const followers = Array.from({ length: 9 }, () => asFollower(flights.join('k')));
    const answer = { body: 'hello' };
    leader.complete(answer);
    await expect(Promise.all(followers)).resolves.toEqual(Array(9).fill({ kind: 'answer', value: answer }));
    // The answer lingers briefly for requests whose cache lookup raced the commit.
    await expect(asFollower(flights.join('k'))).resolves.toEqual({ kind: 'answer', value: answer });
  });

  it('one upstream call for 10 concurrent identical requests', async () => {
    const flights = new SingleFlight<Answer>(10_000);
    let upstreamCalls = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const upstream = async () => {
      upstreamCalls++;
      await released;
      return { body: 'answer' };
    };
    const request = async (): Promise<Answer | undefined> => {
      const flight = flights.join('same');
      if (!flight.leader) {
        const outcome = await flight.outcome;
        return outcome.kind === 'answer' ? outcome.value : upstream();
      }
      const answer = await upstream();
      flight.complete(answer);
      return answer;
    };
    const answers = Promise.all(Array.from({ length: 10 }, request));
    release();
    expect((await answers).every((a) => a?.body === 'answer')).toBe(true);
    expect(upstreamCalls).toBe(1);
  });

  it('keeps different keys apart', async () => {
    const flights = new SingleFlight<Answer>(10_000);
    const a = asLeader(flights.join('a'));
    const b = asLeader(flights.join('b'));
    const followerOfB = asFollower(flights.join('b'));
    b.complete({ body: 'B' });
    a.complete({ body: 'A' });
    await expect(followerOfB).resolves.toEqual({ kind: 'answer', value: { body: 'B' } });
  });

  it('a provider timeout of the leader is every follower’s answer: none of them calls again', async () => {
    const flights = new SingleFlight<Answer>(10_000);
    const leader = asLeader(flights.join('k'));
    const followers = Array.from({ length: 4 }, () => asFollower(flights.join('k')));
    const timeout = new UpstreamTimeoutError(10_000);
    leader.fail(timeout);
    await expect(Promise.all(followers)).resolves.toEqual(Array(4).fill({ kind: 'failed', error: timeout }));
    expect(flights.join('k').leader).toBe(true);
  });

  it('a leader with nothing to share hands the flight on: one follower calls, within its time left, the others wait for it', async () => {
    let clock = 1_000;
    const flights = new SingleFlight<Answer>(10_000, undefined, () => clock);
    const leader = asLeader(flights.join('k'));
    clock += 2_000;
    const first = asFollower(flights.join('k'));
    clock += 1_000;
    const second = asFollower(flights.join('k'));
    clock += 3_000;
    leader.fail();
    const next = await first;
    // Arrived at 3,000 ms, 4,000 ms waited: 6,000 ms left of its own 10 s.
    expect(next).toMatchObject({ kind: 'forward', timeLeftMs: 6_000 });
    if (next.kind !== 'forward' || !next.flight) throw new Error('expected to lead the next flight');
    next.flight.complete({ body: 'second try' });
    await expect(second).resolves.toEqual({ kind: 'answer', value: { body: 'second try' } });
  });

  it('a follower whose limit passes while the provider has not answered the leader times out, without calling', async () => {
    const flights = new SingleFlight<Answer>(30);
    asLeader(flights.join('k'));
    await expect(asFollower(flights.join('k'))).resolves.toEqual({ kind: 'timed-out' });
  });

  it('a follower while the provider streams a long answer to the leader calls it itself at half its limit, with what is left', async () => {
    let clock = 0;
    const flights = new SingleFlight<Answer>(30, undefined, () => clock);
    asLeader(flights.join('k')).answering();
    const follower = asFollower(flights.join('k'));
    // Arrived at 0 with a limit of 30: by 15 it has waited half its limit, and calls with the 15 left.
    clock = 15;
    await expect(follower).resolves.toEqual({ kind: 'forward', timeLeftMs: 15 });
  });

  it('a follower whose leader begins its answer late waits half of what is left, then calls with the rest', async () => {
    let clock = 0;
    const flights = new SingleFlight<Answer>(40, undefined, () => clock);
    const leader = asLeader(flights.join('k'));
    const follower = asFollower(flights.join('k'));
    // The answer begins at 24, past the follower's half (20): it waits until 32, half of the 16 left.
    clock = 24;
    leader.answering();
    await Promise.resolve();
    clock = 32;
    await expect(follower).resolves.toEqual({ kind: 'forward', timeLeftMs: 8 });
  });

  it('only the first settle counts', async () => {
    const flights = new SingleFlight<Answer>(10_000);
    const leader = asLeader(flights.join('k'));
    const follower = asFollower(flights.join('k'));
    leader.fail(new UpstreamTimeoutError(10_000));
    leader.complete({ body: 'late' });
    await expect(follower).resolves.toMatchObject({ kind: 'failed' });
  });

  it('a follower whose client left stops waiting at once', async () => {
    const flights = new SingleFlight<Answer>(10_000);
    asLeader(flights.join('k'));
    const controller = new AbortController();
    const flight = flights.join('k', { signal: controller.signal });
    controller.abort();
    await expect(asFollower(flight)).resolves.toMatchObject({ kind: 'forward' });
    const already = flights.join('k', { signal: AbortSignal.abort() });
    await expect(asFollower(already)).resolves.toMatchObject({ kind: 'forward' });
  });

  it('a leader that never settles frees its key after the flight limit, without touching a newer flight', async () => {
    const flights = new SingleFlight<Answer>(10_000, 20);
    const stale = asLeader(flights.join('k'));
    const follower = asFollower(flights.join('k'));
    const handedOn = await follower;
    if (handedOn.kind !== 'forward' || !handedOn.flight) throw new Error('expected to lead the next flight');
    expect(flights.size).toBe(1);
    const next = asFollower(flights.join('k'));
    stale.complete({ body: 'stale' });
    expect(flights.size).toBe(1);
    handedOn.flight.complete({ body: 'fresh' });
    await expect(next).resolves.toEqual({ kind: 'answer', value: { body: 'fresh' } });
  });
});
