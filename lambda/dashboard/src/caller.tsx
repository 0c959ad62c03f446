import { createContext, type ComponentChildren } from 'preact';
import { useContext } from 'preact/hooks';
import type { Role, SessionInfo } from './types';

/** Who is signed in: their role decides which controls the pages show (docs/people.md). */
export const CallerContext = createContext<SessionInfo | null>(null);

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2 };

/** Whether the signed-in caller's role may do what `needed` may; before the answer, nothing is allowed. */
export function useAllowed(needed: Role): boolean {
  const caller = useContext(CallerContext);
  return caller !== null && RANK[caller.role] >= RANK[needed];
}

/** The caller's own actor id (`token:<id>` or `person:<subject>`), which a member's own tokens were issued by. */
export function useActor(): string | undefined {
  return useContext(CallerContext)?.actor;
}

/** Shows its children only to a role that may use them; the API refuses the others anyway. */
export function Allowed({ role, children }: { role: Role; children: ComponentChildren }) {
  return useAllowed(role) ? <>{children}</> : null;
}
