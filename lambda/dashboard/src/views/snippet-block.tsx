import { CopyButton } from '../components/copy-button';

interface Props {
  title: string;
  description: string;
  code: string;
  testId: string;
}

export function SnippetBlock({ title, description, code, testId }: Props) {
  return (
    <div class="snippet" data-testid={testId}>
      <div class="snippet-head">
        <h3 class="snippet-title">{title}</h3>
        <CopyButton text={code} label={`Copy`} testId={`${testId}-copy`} />
      </div>
      <p class="muted">{description}</p>
      <pre class="code" tabIndex={0}>
        <code>{code}</code>
      </pre>
    </div>
  );
}
