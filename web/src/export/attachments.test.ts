import { describe, expect, it } from 'vitest';
import { readAttachment, size } from './attachments';

describe('an exported file’s attachments read back', () => {
  it('shows a raster image from its data: address, and offers anything else (an SVG too) only as an octet-stream download', () => {
    const png = readAttachment('{"id":"a-1","name":"shot.png","type":"image/png","size":3,"data":"iVBO"}')!;
    expect(png).toMatchObject({ name: 'shot.png', image: true, href: 'data:image/png;base64,iVBO' });
    const svg = readAttachment('{"id":"a-2","name":"x.svg","type":"image/svg+xml","size":3,"data":"PHN2"}')!;
    expect(svg).toMatchObject({ image: false, href: 'data:application/octet-stream;base64,PHN2' });
    const pdf = readAttachment('{"id":"a-3","name":"r.pdf","type":"application/pdf; x=1","size":3,"data":"JVBE"}')!;
    expect(pdf).toMatchObject({ image: false, type: 'application/pdf', href: 'data:application/octet-stream;base64,JVBE' });
  });

  it('says why a file was left out, with the limit', () => {
    const big = readAttachment('{"id":"a-4","name":"big.bin","type":"","size":9000000,"omitted":"file","limit":8388608,"data":"AAAA"}')!;
    expect(big).toMatchObject({ omitted: 'file', limit: 8388608, image: false });
    expect(big.href).toBeUndefined();
    expect(readAttachment('{"name":"b","size":1,"omitted":"total","limit":25165824}')).toMatchObject({ omitted: 'total' });
  });

  it('drops a damaged block, and data that is not base64 (nothing else can reach the address)', () => {
    expect(readAttachment('not json')).toBeUndefined();
    expect(readAttachment('[1]')).toBeUndefined();
    expect(readAttachment('{"name":"x","type":"image/png","data":"AAAA\\"onerror=alert(1)"}')).toBeUndefined();
    expect(readAttachment('{"name":"x","type":"image/png","data":"AAA"}')).toBeUndefined();
  });

  it('words sizes', () => {
    expect([size(12), size(2048), size(8 << 20)]).toEqual(['12 B', '2.0 KiB', '8.0 MiB']);
  });
});
