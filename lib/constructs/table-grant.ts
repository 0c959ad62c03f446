import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { TableGrant } from '../../lambda/store/table-calls';

/** A role's statement for one of its table grants, with the conditions that limit its writes when declared. */
export function tableGrantStatement(grant: TableGrant, tableArn: string): PolicyStatement {
  return new PolicyStatement({
    actions: grant.actions.map((a) => `dynamodb:${a}`),
    resources: [tableArn],
    conditions: grantConditions(grant),
  });
}

/** The IAM condition that limits a grant's writes as declared; undefined when they are not limited. */
function grantConditions(grant: TableGrant): Record<string, Record<string, string[]>> | undefined {
  const conditions: Record<string, Record<string, string[]>> = {};
  if (grant.leadingKeys) conditions['ForAllValues:StringLike'] = { 'dynamodb:LeadingKeys': grant.leadingKeys };
  if (grant.attributes) conditions['ForAllValues:StringEquals'] = { 'dynamodb:Attributes': grant.attributes };
  return Object.keys(conditions).length ? conditions : undefined;
}
