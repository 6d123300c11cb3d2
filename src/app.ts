import { ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import express, { NextFunction, Request, Response } from 'express';
import { AppModule } from '@/app.module';
import { InvalidRequestError } from '@/common/errors';
import { sendError } from '@/common/http-error.filter';
import { JsonLogger } from '@/common/json-logger';
import { requestLogging } from '@/common/request-context';
import { AppConfig } from '@/config/config';
import { SERVICE_VERSION } from '@/common/service-version';

const BODY_LIMIT = '1mb';

/** Builds the application: used by `main.ts` and by the end-to-end tests, so both run the same app. */
export async function createApp(
  config: AppConfig,
  logger: JsonLogger,
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, logger), {
    logger,
    bodyParser: false,
    abortOnError: false,
  });
  const http = app.getHttpAdapter().getInstance();
  http.disable('x-powered-by');
  // Hashing every body for an ETag costs time on every response; results set their own where useful.
  http.set('etag', false);
  http.set('trust proxy', false);

  app.use(requestLogging(logger));
  app.use(express.json({ limit: BODY_LIMIT }));
  app.use(express.urlencoded({ extended: false, limit: BODY_LIMIT }));
  // A body that does not parse is the client's error, answered in the layout's shape.
  app.use((error: unknown, request: Request, response: Response, next: NextFunction) => {
    if (!error) return next();
    sendError(logger, error, request, response);
  });
  if (config.corsOrigins.length > 0) {
    app.enableCors({
      origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
      allowedHeaders: ['Authorization', 'Content-Type'],
      exposedHeaders: ['Applied-Username', 'X-Request-Id'],
    });
  }
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors) =>
        new InvalidRequestError(
          errors
            .flatMap((error) =>
              Object.values(error.constraints ?? { [error.property]: 'is invalid' }),
            )
            .join('; '),
        ),
    }),
  );

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Drey')
      .setDescription(
        'A data project published as a JSON API: catalog, parameters, datasets, dashboards.',
      )
      .setVersion(SERVICE_VERSION)
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
  return app;
}
