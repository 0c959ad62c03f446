import { SingleFlight, type Flight, type LeaderFlight } from '../../../lambda/cache/single-flight';

interface Answer {
  body: string;
}

function asLeader(flight: Flight<Answer>): LeaderFlight<Answer> {
  if (!flight.leader) throw new Error('expected to lead');
  return flight;
}

function asFollower(flight: Flight<Answer>): Promise<Answer | undefined> {
  if (flight.leader) throw new Error('expected to follow');
  return flight.result;
}

describe('SingleFlight', () => {
  it('makes the first caller the leader and serves its answer to every follower', async () => {
    const flights = new SingleFlight<Answer>(10_000);
    const leader = asLeader(flights.join('k'));
    const followers = Array.from({ length: 9 }, () => asFollower(flights.join('k')));
    const answer = { body: 'hello' };
    leader.complete(answer);
    await expect(Promise.all(followers)).resolves.toEqual(Array(9).fill(answer));
    // The answer lingers briefly for requests whose cache lookup raced the commit.
    const late = flights.join('k');
    expect(late.leader).toBe(false);
    await expect((late as { result: Promise<unknown> }).result).resolves.toBe(answer);
  });

  it('one upstream call for 10 concurrent identical requests', async () => {
    const flights = new SingleFlight<Answer>(10_000);
    let upstreamCalls = 0;
    const upstream = async () => {
      upstreamCalls++;
      await new Promise((r) => setTimeout(r, 20));
      return { body: 'answer' };
    };
    const request = async (): Promise<Answer | undefined> => {
      const flight = flights.join('same');
      if (!flight.leader) return (await flight.result) ?? upstream();
      try {
        const answer = await upstream();
        flight.complete(answer);
        return answer;
      } catch (error) {
        flight.fail();
        throw error;
      }
    };
    const answers = await Promise.all(Array.from({ length: 10 }, request));
    expect(upstreamCalls).toBe(1);
    expect(answers.every((a) => a?.body === 'answer')).toBe(true);
  });

  it('keeps different keys apart', async () => {
    const flights = new SingleFlight<Answer>(10_000);
    const a = asLeader(flights.join('a'));
    const b = asLeader(flights.join('b'));
    const followerOfB = asFollower(flights.join('b'));
    b.complete({ body: 'B' });
    a.complete({ body: 'A' });
    await expect(followerOfB).resolves.toEqual({ body: 'B' });
  });

  it('followers get undefined when the leader fails, and the key is free again', async () => {
    const flights = new SingleFlight<Answer>(10_000);
    const leader = asLeader(flights.join('k'));
    const follower = asFollower(flights.join('k'));
    leader.fail();
    await expect(follower).resolves.toBeUndefined();
    expect(flights.join('k').leader).toBe(true);
  });

  it('only the first settle counts', async () => {
    const flights = new SingleFlight<Answer>(10_000);
    const leader = asLeader(flights.join('k'));
    const follower = asFollower(flights.join('k'));
    leader.fail();
    leader.complete({ body: 'late' });
    await expect(follower).resolves.toBeUndefined();
  });

  it('a follower stops waiting at the wait bound, not before', async () => {
    // Jest's clock: the order of events (still waiting at 29 ms, given up at 30 ms), not the machine's speed.
    jest.useFakeTimers();
    try {
      const flights = new SingleFlight<Answer>(30);
      asLeader(flights.join('k'));
      let settled = false;
      const follower = asFollower(flights.join('k')).finally(() => (settled = true));
      await jest.advanceTimersByTimeAsync(29);
      expect(settled).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await expect(follower).resolves.toBeUndefined();
    } finally {
      jest.useRealTimers();
    }
  });

  it('a follower whose client left stops waiting at once', async () => {
    const flights = new SingleFlight<Answer>(10_000);
    asLeader(flights.join('k'));
    const controller = new AbortController();
    const flight = flights.join('k', { signal: controller.signal });
    controller.abort();
    await expect(asFollower(flight)).resolves.toBeUndefined();
    const already = flights.join('k', { signal: AbortSignal.abort() });
    await expect(asFollower(already)).resolves.toBeUndefined();
  });

  it('a leader that never settles frees its key after the flight limit, without touching a newer flight', async () => {
    const flights = new SingleFlight<Answer>(10_000, 20);
    const stale = asLeader(flights.join('k'));
    const follower = asFollower(flights.join('k'));
    await expect(follower).resolves.toBeUndefined();
    expect(flights.size).toBe(0);
    const fresh = asLeader(flights.join('k'));
    const next = asFollower(flights.join('k'));
    stale.complete({ body: 'stale' });
    expect(flights.size).toBe(1);
    fresh.complete({ body: 'fresh' });
    await expect(next).resolves.toEqual({ body: 'fresh' });
  });
});
