// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

// The relay project's own router: turns one signed user intent into one rail deposit.
//
// A user signs a RelayIntent (where the funds go, at least how much arrives, the most the
// relayer may keep, and the hash of the exact deposit call the host composed for the rail).
// A registered relayer submits it, paying the gas; the router pulls the tokens, withholds at
// most `feeCap` for the relayer, and either transfers the rest to an intake address or hands
// it to the rail's deposit contract with one call. Two ways in:
//
//   relayPermit2 - the intent is the Permit2 witness (`permitWitnessTransferFrom`, spender =
//                  this router); optionally preceded by an EIP-2612 permit to Permit2, so a
//                  user with no ETH and no prior approval can pay gaslessly.
//   relayOrder   - the router's own EIP-712 RelayOrder over tokens approved to the router
//                  (optionally by an EIP-2612 permit), with Permit2's unordered-nonce bitmap.
//
// Only relayers may submit (a front-runner with the same signature could otherwise name
// itself the fee recipient). The deposit call is bound by `planHash`, which the user signs.
// The router holds nothing between calls: every entry point ends with the router's balance
// of the token exactly as it was before, and it has no receive/fallback. `rescue` lets the
// owner return tokens (or ETH) that reach it by mistake.
//
// Defence in depth against a hostile deposit call (the rail's calldata comes from outside):
// a deposit call may not target the token being moved, Permit2 or the router itself, and may
// not use the ERC-20 `transferFrom` selector, so it cannot spend allowances that users gave
// the router for `relayOrder`. The router approves a declared spender once (unlimited, as the
// relayer's own two-transaction path does): it holds nothing between transactions, so a
// standing approval can reach at most the net amount of the route in flight, whose calldata
// the user signed (planHash); approving once saves each later route an allowance write.

/// What the user signs: where the funds go and on what terms (the Permit2 witness).
struct RelayIntent {
    string recipient; // destination address as text (EVM 0x... or a non-EVM address)
    string toChain; // destination chain id as decimal text ("42161") or node name ("solana")
    string toToken; // destination token: contract address text or symbol
    uint256 minOut; // least the recipient receives, destination smallest units
    string rail; // rail id, e.g. "lifi"
    bytes32 planHash; // planHashOf(deposit)
    uint256 feeCap; // most the relayer may withhold (route fee + gas), source units
    uint256 deadline; // unix seconds
}

/// The router's own EIP-712 intent, over tokens approved to the router.
struct RelayOrder {
    address owner;
    address token;
    uint256 amount;
    uint256 nonce; // unordered nonce in the router's own bitmap (same scheme as Permit2)
    RelayIntent intent;
}

/// The rail's declared deposit call, composed by the host.
struct Deposit {
    address target; // contract called; or, when data is empty, where the net amount is sent
    address spender; // approved for the net amount before the call (address(0): the target)
    uint256 value; // native value forwarded; must equal msg.value
    bytes data; // calldata; empty = plain ERC-20 transfer of the net amount to target
}

/// What the relayer keeps, and where it goes.
struct Settlement {
    uint256 fee; // withheld from the amount; at most intent.feeCap and the amount
    address feeRecipient;
}

/// An EIP-2612 permit; deadline == 0 means "none".
struct TokenPermit {
    uint256 value;
    uint256 deadline;
    uint8 v;
    bytes32 r;
    bytes32 s;
}

// ---- Permit2's argument types (same names and layouts as in Permit2.sol / Uniswap's) ----

struct TokenPermissions {
    address token;
    uint256 amount;
}

struct PermitTransferFrom {
    TokenPermissions permitted;
    uint256 nonce;
    uint256 deadline;
}

struct SignatureTransferDetails {
    address to;
    uint256 requestedAmount;
}

interface IPermit2 {
    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;
}

interface IERC20Permit {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

interface IERC20View {
    function balanceOf(address who) external view returns (uint256);
    function allowance(address owner, address spender) external view returns (uint256);
}

interface IERC1271Wallet {
    function isValidSignature(bytes32 hash, bytes memory signature) external view returns (bytes4);
}

contract RelayRouter {
    // ---- errors ----
    error NotOwner();
    error NotRelayer(address caller);
    error Reentrancy();
    error IntentExpired(uint256 deadline);
    error PlanMismatch(bytes32 signed, bytes32 given);
    error FeeAboveCap(uint256 fee, uint256 cap);
    error ValueMismatch();
    error PermitFailed();
    error FundsLeft(uint256 balance);
    error ForbiddenCall(address target, bytes4 selector);
    error InvalidNonce();
    error InvalidSignatureLength();
    error InvalidSignature();
    error InvalidSigner();
    error InvalidContractSignature();
    error TransferFailed();

    // ---- events ----
    event Relayed(address indexed owner, address indexed token, uint256 amount, uint256 fee, bytes32 indexed planHash);
    event RelayerSet(address indexed who, bool allowed);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask);
    event Rescued(address indexed token, address indexed to, uint256 amount);

    // ---- EIP-712 ----
    string public constant RELAY_INTENT_TYPE =
        "RelayIntent(string recipient,string toChain,string toToken,uint256 minOut,string rail,bytes32 planHash,uint256 feeCap,uint256 deadline)";
    /// Permit2's witnessTypeString: the witness field, then the referenced types in order.
    string public constant WITNESS_TYPE_STRING =
        "RelayIntent witness)RelayIntent(string recipient,string toChain,string toToken,uint256 minOut,string rail,bytes32 planHash,uint256 feeCap,uint256 deadline)TokenPermissions(address token,uint256 amount)";
    string public constant RELAY_ORDER_TYPE =
        "RelayOrder(address owner,address token,uint256 amount,uint256 nonce,RelayIntent intent)RelayIntent(string recipient,string toChain,string toToken,uint256 minOut,string rail,bytes32 planHash,uint256 feeCap,uint256 deadline)";
    bytes32 public constant RELAY_INTENT_TYPEHASH = keccak256(bytes(RELAY_INTENT_TYPE));
    bytes32 public constant RELAY_ORDER_TYPEHASH = keccak256(bytes(RELAY_ORDER_TYPE));

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("RelayRouter");
    bytes32 private constant VERSION_HASH = keccak256("3.1");

    uint256 private constant S_UPPER_BOUND = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;
    bytes32 private constant VS_S_MASK = 0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff;
    bytes4 private constant ERC1271_MAGIC = 0x1626ba7e;
    bytes4 private constant TRANSFER_FROM = 0x23b872dd;

    // ---- state ----
    address public immutable permit2;
    address public owner;
    mapping(address => bool) public relayers;
    /// owner => word position => bitmap of used RelayOrder nonces (bit = nonce & 255, word = nonce >> 8).
    mapping(address => mapping(uint256 => uint256)) public nonceBitmap;
    bool private transient _entered;

    constructor(address permit2_, address[] memory relayers_) {
        permit2 = permit2_;
        owner = msg.sender;
        emit OwnershipTransferred(address(0), msg.sender);
        for (uint256 i = 0; i < relayers_.length; ++i) {
            relayers[relayers_[i]] = true;
            emit RelayerSet(relayers_[i], true);
        }
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    modifier onlyRelayer() {
        if (!relayers[msg.sender]) revert NotRelayer(msg.sender);
        _;
    }

    modifier nonReentrant() {
        if (_entered) revert Reentrancy();
        _entered = true;
        _;
        _entered = false;
    }

    // ---- administration ----

    function setRelayer(address who, bool allowed) external onlyOwner {
        relayers[who] = allowed;
        emit RelayerSet(who, allowed);
    }

    function transferOwnership(address newOwner) external onlyOwner {
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    /// Returns tokens sent to the router by mistake (`token == address(0)`: ETH that reached it
    /// without a call, e.g. via selfdestruct). The router holds nothing between relays, so
    /// this can never touch a user's funds in flight.
    function rescue(address token, address to, uint256 amount) external onlyOwner nonReentrant {
        if (token == address(0)) {
            (bool ok,) = to.call{value: amount}("");
            if (!ok) revert TransferFailed();
        } else {
            _call(token, abi.encodeWithSelector(0xa9059cbb, to, amount));
        }
        emit Rescued(token, to, amount);
    }

    /// Marks the RelayOrder nonces set in `mask` of word `wordPos` as used for msg.sender.
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external {
        nonceBitmap[msg.sender][wordPos] |= mask;
        emit UnorderedNonceInvalidation(msg.sender, wordPos, mask);
    }

    // ---- EIP-712 views ----

    /// The EIP-712 domain separator for the current chain and this address.
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// EIP-5267: name, version, chainId and verifyingContract are set (0x0f).
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name,
            string memory version,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (0x0f, "RelayRouter", "3.1", block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    function hashIntent(RelayIntent calldata i) public pure returns (bytes32) {
        return keccak256(
            abi.encode(
                RELAY_INTENT_TYPEHASH,
                keccak256(bytes(i.recipient)),
                keccak256(bytes(i.toChain)),
                keccak256(bytes(i.toToken)),
                i.minOut,
                keccak256(bytes(i.rail)),
                i.planHash,
                i.feeCap,
                i.deadline
            )
        );
    }

    function hashOrder(RelayOrder calldata o) public pure returns (bytes32) {
        return keccak256(abi.encode(RELAY_ORDER_TYPEHASH, o.owner, o.token, o.amount, o.nonce, hashIntent(o.intent)));
    }

    /// The hash a RelayIntent signs for its deposit call.
    function planHashOf(Deposit calldata d) public pure returns (bytes32) {
        return keccak256(abi.encode(d.target, d.spender, d.value, keccak256(d.data)));
    }

    // ---- entry points ----

    /// Pulls `permit.permitted.amount` from `owner` through Permit2 with `intent` as the witness
    /// (spender = this router), then settles: `settlement.fee` to the fee recipient, the rest
    /// into `deposit`.
    function relayPermit2(
        PermitTransferFrom calldata permit,
        address owner,
        RelayIntent calldata intent,
        bytes calldata signature,
        TokenPermit calldata tokenPermit,
        Deposit calldata deposit,
        Settlement calldata settlement
    ) external payable onlyRelayer nonReentrant {
        address token = permit.permitted.token;
        uint256 amount = permit.permitted.amount;
        _checkIntent(intent, deposit, settlement, amount);
        if (tokenPermit.deadline != 0) _tokenPermit(token, owner, permit2, amount, tokenPermit);

        uint256 before = IERC20View(token).balanceOf(address(this));
        IPermit2(permit2).permitWitnessTransferFrom(
            permit,
            SignatureTransferDetails(address(this), amount),
            owner,
            hashIntent(intent),
            WITNESS_TYPE_STRING,
            signature
        );
        _settle(token, amount, deposit, settlement);
        _checkEmpty(token, before);
        emit Relayed(owner, token, amount, settlement.fee, intent.planHash);
    }

    /// Verifies `order` signed by `order.owner` under this router's EIP-712 domain, pulls
    /// `order.amount` with transferFrom (the owner approved the router, or `tokenPermit` does
    /// it now), then settles like relayPermit2.
    function relayOrder(
        RelayOrder calldata order,
        bytes calldata signature,
        TokenPermit calldata tokenPermit,
        Deposit calldata deposit,
        Settlement calldata settlement
    ) external payable onlyRelayer nonReentrant {
        _checkIntent(order.intent, deposit, settlement, order.amount);
        _useUnorderedNonce(order.owner, order.nonce);
        _verify(signature, keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), hashOrder(order))), order.owner);
        if (tokenPermit.deadline != 0) {
            _tokenPermit(order.token, order.owner, address(this), order.amount, tokenPermit);
        }

        uint256 before = IERC20View(order.token).balanceOf(address(this));
        _call(order.token, abi.encodeWithSelector(TRANSFER_FROM, order.owner, address(this), order.amount));
        _settle(order.token, order.amount, deposit, settlement);
        _checkEmpty(order.token, before);
        emit Relayed(order.owner, order.token, order.amount, settlement.fee, order.intent.planHash);
    }

    // ---- internals ----

    function _checkIntent(
        RelayIntent calldata intent,
        Deposit calldata deposit,
        Settlement calldata settlement,
        uint256 amount
    ) private view {
        if (block.timestamp > intent.deadline) revert IntentExpired(intent.deadline);
        bytes32 given = planHashOf(deposit);
        if (given != intent.planHash) revert PlanMismatch(intent.planHash, given);
        if (settlement.fee > intent.feeCap) revert FeeAboveCap(settlement.fee, intent.feeCap);
        if (settlement.fee > amount) revert FeeAboveCap(settlement.fee, amount);
        if (msg.value != deposit.value) revert ValueMismatch();
        // an intake transfer forwards no native value (it would stay in the router)
        if (deposit.data.length == 0 && deposit.value != 0) revert ValueMismatch();
    }

    /// Applies an EIP-2612 permit; if it fails (e.g. a front-runner already submitted it), the
    /// route goes on as long as the allowance it would have set is there.
    function _tokenPermit(address token, address owner_, address spender, uint256 amount, TokenPermit calldata p)
        private
    {
        try IERC20Permit(token).permit(owner_, spender, p.value, p.deadline, p.v, p.r, p.s) {}
        catch {
            if (IERC20View(token).allowance(owner_, spender) < amount) revert PermitFailed();
        }
    }

    function _settle(address token, uint256 amount, Deposit calldata deposit, Settlement calldata settlement)
        private
    {
        uint256 fee = settlement.fee;
        if (fee > 0) _call(token, abi.encodeWithSelector(0xa9059cbb, settlement.feeRecipient, fee));
        uint256 net = amount - fee;
        address target = deposit.target;
        if (deposit.data.length == 0) {
            _call(token, abi.encodeWithSelector(0xa9059cbb, target, net));
            return;
        }
        bytes4 selector = bytes4(deposit.data);
        if (target == token || target == permit2 || target == address(this) || selector == TRANSFER_FROM) {
            revert ForbiddenCall(target, selector);
        }
        address spender = deposit.spender == address(0) ? target : deposit.spender;
        // A standing approval: the router holds nothing between transactions (every entry
        // point ends with _checkEmpty), so the spender can never take more than this call's
        // net amount; approving once saves every later route an allowance write.
        if (IERC20View(token).allowance(address(this), spender) < net) {
            _call(token, abi.encodeWithSelector(0x095ea7b3, spender, type(uint256).max));
        }
        (bool ok, bytes memory ret) = target.call{value: deposit.value}(deposit.data);
        if (!ok) _bubble(ret);
    }

    function _checkEmpty(address token, uint256 before) private view {
        uint256 balance = IERC20View(token).balanceOf(address(this));
        if (balance != before) revert FundsLeft(balance);
    }

    function _useUnorderedNonce(address owner_, uint256 nonce) private {
        uint256 wordPos = nonce >> 8;
        uint256 bit = 1 << (nonce & 0xff);
        uint256 flipped = nonceBitmap[owner_][wordPos] ^= bit;
        if (flipped & bit == 0) revert InvalidNonce();
    }

    /// Accepts 65-byte (r, s, v) and 64-byte EIP-2098 (r, vs) signatures from EOAs, and
    /// ERC-1271 signatures from contract owners. High-s signatures are rejected (as Permit2).
    function _verify(bytes calldata signature, bytes32 digest, address claimedSigner) private view {
        if (claimedSigner.code.length > 0) {
            bytes4 magic = IERC1271Wallet(claimedSigner).isValidSignature(digest, signature);
            if (magic != ERC1271_MAGIC) revert InvalidContractSignature();
            return;
        }
        bytes32 r;
        bytes32 s;
        uint8 v;
        if (signature.length == 65) {
            r = bytes32(signature[0:32]);
            s = bytes32(signature[32:64]);
            v = uint8(signature[64]);
        } else if (signature.length == 64) {
            r = bytes32(signature[0:32]);
            bytes32 vs = bytes32(signature[32:64]);
            s = vs & VS_S_MASK;
            v = uint8(uint256(vs) >> 255) + 27;
        } else {
            revert InvalidSignatureLength();
        }
        if (uint256(s) > S_UPPER_BOUND) revert InvalidSignature();
        address signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert InvalidSignature();
        if (signer != claimedSigner) revert InvalidSigner();
    }

    /// Calls an ERC-20 method, accepting tokens that return `true` or nothing; bubbles the
    /// token's own revert data.
    function _call(address token, bytes memory data) private {
        (bool ok, bytes memory ret) = token.call(data);
        if (!ok && ret.length > 0) _bubble(ret);
        if (!ok || (ret.length != 0 && !abi.decode(ret, (bool))) || (ret.length == 0 && token.code.length == 0)) {
            revert TransferFailed();
        }
    }

    function _bubble(bytes memory ret) private pure {
        assembly ("memory-safe") {
            revert(add(ret, 32), mload(ret))
        }
    }
}
