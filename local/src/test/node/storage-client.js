// Drives the Cloud Storage stand-in with Google's Node.js client exactly as a user would: STORAGE_EMULATOR_HOST
// set to what dev/run prints, no other configuration. Uploads every file of INPUT_DIR (the plan says how), reads
// each object's metadata, downloads it into OUTPUT_DIR and lists the prefix; prints one JSON report on stdout.
// Run by dev.once.local.storage.StorageClientsTest, which checks the report against the stand-in's own state.
'use strict';
const fs = require('fs');
const path = require('path');
const {Storage} = require('@google-cloud/storage');

async function main() {
  const [bucketName, prefix, inputDir, outputDir, planFile] = process.argv.slice(2);
  const plan = JSON.parse(fs.readFileSync(planFile, 'utf8'));
  const bucket = new Storage({projectId: 'once-local'}).bucket(bucketName);
  const report = {objects: [], listing: []};
  for (const step of plan) {
    const options = {
      destination: prefix + step.name,
      resumable: step.resumable,
      contentType: step.contentType,
      metadata: {metadata: step.metadata},
    };
    if (step.chunkSize) {
      options.chunkSize = step.chunkSize;
    }
    const [file, uploaded] = await bucket.upload(path.join(inputDir, step.file), options);
    const [metadata] = await file.getMetadata();
    const downloaded = String(report.objects.length);
    await file.download({destination: path.join(outputDir, downloaded)});
    report.objects.push({
      name: file.name,
      uploadGeneration: String(uploaded.generation),
      generation: String(metadata.generation),
      size: String(metadata.size),
      md5Hash: metadata.md5Hash,
      crc32c: metadata.crc32c,
      contentType: metadata.contentType,
      metadata: metadata.metadata || {},
      downloaded,
    });
  }
  const [files] = await bucket.getFiles({prefix});
  report.listing = files.map(f => ({name: f.name, generation: String(f.metadata.generation)}));
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch(e => {
  process.stderr.write(`storage-client.js failed: ${e.code || ''} ${e.stack || e}\n`);
  process.exit(1);
});
