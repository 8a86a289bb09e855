package keys

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// AWSMaxMessage is the longest message AWS KMS signs with pure Ed25519
// (ED25519_SHA_512 takes MessageType RAW, and Sign takes at most 4096
// bytes). Longer messages are ErrMessageTooLarge before any request.
const AWSMaxMessage = 4096

// awsBackend signs with an AWS KMS asymmetric key: ECC_NIST_EDWARDS25519
// (ED25519_SHA_512 over the raw message) or ECC_NIST_P256 (ECDSA_SHA_256
// over a digest).
type awsBackend struct {
	client *kms.Client
	key    string
	alg    Algorithm
}

func openAWS(ctx context.Context, u *URI, opts Options) (*Signer, error) {
	var lo []func(*config.LoadOptions) error
	if opts.HTTPClient != nil {
		// Otherwise the SDK builds its own client, which also honours
		// AWS_CA_BUNDLE (a custom *http.Client cannot take it).
		lo = append(lo, config.WithHTTPClient(opts.HTTPClient))
	}
	region := opts.AWSRegion
	if strings.HasPrefix(u.AWSKey, "arn:") {
		// arn:PARTITION:kms:REGION:ACCOUNT:...
		region = strings.Split(u.AWSKey, ":")[3]
	}
	if region != "" {
		lo = append(lo, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		return nil, fmt.Errorf("%w: AWS configuration: %w", ErrUnreachable, err)
	}
	if cfg.Region == "" {
		return nil, fmt.Errorf("%w: no AWS region: use a key ARN, set AWS_REGION or configure the region", ErrUnreachable)
	}
	endpoint := opts.AWSEndpoint
	if endpoint == "" && u.AWSEndpoint != "" {
		endpoint = "https://" + u.AWSEndpoint
	}
	client := kms.NewFromConfig(cfg, func(o *kms.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	out, err := client.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: aws.String(u.AWSKey)})
	if err != nil {
		return nil, awsError("GetPublicKey", err)
	}
	if out.KeyUsage != types.KeyUsageTypeSignVerify {
		return nil, fmt.Errorf("%w: AWS KMS key %s has usage %s, want SIGN_VERIFY", ErrAlgorithm, u.AWSKey, out.KeyUsage)
	}
	var alg Algorithm
	switch out.KeySpec {
	case types.KeySpecEccNistEdwards25519:
		alg = Ed25519
	case types.KeySpecEccNistP256:
		alg = ECDSAP256
	default:
		return nil, fmt.Errorf("%w: AWS KMS key spec %s; svc signs with ECC_NIST_EDWARDS25519 or ECC_NIST_P256", ErrAlgorithm, out.KeySpec)
	}
	pub, err := x509.ParsePKIXPublicKey(out.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("%w: AWS KMS public key: %v", ErrAlgorithm, err)
	}
	if got, err := algorithmOf(pub); err != nil || got != alg {
		return nil, fmt.Errorf("%w: AWS KMS returned a %T public key for key spec %s", ErrAlgorithm, pub, out.KeySpec)
	}
	return newSigner(ctx, u.Raw, SchemeAWS, pub, &awsBackend{client: client, key: u.AWSKey, alg: alg}, true, opts)
}

func (a *awsBackend) sign(ctx context.Context, msg []byte) ([]byte, error) {
	in := &kms.SignInput{KeyId: aws.String(a.key), Message: msg}
	if a.alg == Ed25519 {
		in.MessageType, in.SigningAlgorithm = types.MessageTypeRaw, types.SigningAlgorithmSpecEd25519Sha512
	} else {
		in.MessageType, in.SigningAlgorithm = types.MessageTypeDigest, types.SigningAlgorithmSpecEcdsaSha256
	}
	out, err := a.client.Sign(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSign, awsError("Sign", err))
	}
	return out.Signature, nil
}

func (a *awsBackend) close() error { return nil }

// awsError classifies an AWS KMS error: a key that does not exist, or is
// disabled, is ErrKeyNotFound; anything else (credentials, permissions,
// network) ErrUnreachable.
func awsError(op string, err error) error {
	var nf *types.NotFoundException
	var dis *types.DisabledException
	var st *types.KMSInvalidStateException
	if errors.As(err, &nf) || errors.As(err, &dis) || errors.As(err, &st) {
		return fmt.Errorf("%w: AWS KMS %s: %w", ErrKeyNotFound, op, err)
	}
	return fmt.Errorf("%w: AWS KMS %s: %w", ErrUnreachable, op, err)
}
